// A node that sends the file of each message with its enhancement and passes on the service's answer
// with its media uid in msg.media_uid: the upload and enhance video nodes, which differ only in their
// operation (src/nodes/file-request.ts) and whether they keep messages across restarts.
import { checkNodeEnhancement, sendMessageFile, type FileRequest } from './file-request';
import { enhancementOf } from './enhancement';
import { handleMessages } from './message-jobs';
import { MessageKeeper } from './message-keeper';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, RedApi, RedNode } from './red';

export function fileRequestNode<Answer extends { uid: string }>(
  type: string,
  request: FileRequest<Answer>,
  options: {
    /** A file from a path is kept on disk until its message is sent on (its node has the setting "keep across restarts"). */
    keepsMessages: boolean;
  },
): (RED: RedApi) => void {
  return (RED) =>
    RED.nodes.registerType(type, function (this: RedNode, def: NodeDef) {
      RED.nodes.createNode(this, def);
      const service = serviceOf(RED, this, def);
      const configured = enhancementOf(def, request.fields);
      checkSettingsAtDeploy(this, () => checkNodeEnhancement(request, configured));
      const keeper = options.keepsMessages ? new MessageKeeper(RED, this, def) : undefined;

      const jobs = handleMessages(this, async (job) => {
        await keeper?.keepBeforeUpload(job);
        const answer = await sendMessageFile(request, service, job, configured, RED.settings.fileWorkingDirectory);
        job.msg.media_uid = answer.uid;
        job.msg.payload = answer;
        return job.msg;
      });
      keeper?.resumeInto(jobs);
    });
}
