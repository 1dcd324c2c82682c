// A node that sends the file of each message with its enhancement and passes on the service's answer
// with its media uid in msg.media_uid: the upload and enhance video nodes, which differ only in their
// operation (src/nodes/file-request.ts) and whether they keep messages across restarts.
import { enhancementOf } from './enhancement';
import { checkNodeEnhancement, messageEnhancement, sendMessageFile, type FileRequest } from './file-request';
import { readSettleMs, waitForInputToSettle } from './file-settle';
import { mediaNode } from './media-node';
import type { RedApi } from './red';

export function fileRequestNode<Answer extends { uid: string; file_name?: string }>(
  type: string,
  request: FileRequest<Answer>,
  options: {
    /** A file from a path is kept on disk until its message is sent on (a Buffer only once uploaded). */
    keepsMessages: boolean;
    /** A file from a path is read once it has stopped changing (the node's "wait for the file to settle"). */
    settles?: boolean;
  },
): (RED: RedApi) => void {
  const { settles, ...nodeOptions } = options;
  // A delivered message carries a media only started: the wait or download node finishes it.
  return mediaNode(
    type,
    { ...nodeOptions, finishesMedia: false, uploads: true },
    ({ RED, def, service, keeper, t }) => {
      const configured = enhancementOf(def, request.fields);
      const checkSettings = () => {
        checkNodeEnhancement(t, request, configured);
        if (settles) readSettleMs(t, def);
      };
      return {
        checkSettings,
        handle: async (job) => {
          await keeper.keepBeforeUpload(job);
          if (settles) await waitForInputToSettle(job, readSettleMs(t, def), RED.settings.fileWorkingDirectory);
          const enhancement = messageEnhancement(request, job, configured);
          const answer = await sendMessageFile(
            request,
            service,
            job,
            { configured, enhancement },
            RED.settings.fileWorkingDirectory,
          );
          job.noteMedia(answer.uid, answer.file_name);
          job.msg.media_uid = answer.uid;
          job.msg.payload = answer;
          return job.msg;
        },
      };
    },
  );
}
