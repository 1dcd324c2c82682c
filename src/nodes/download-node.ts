// media-enhance-download: fetches a media's file, into a folder (written atomically: a temporary file
// renamed when complete) or as a Buffer in msg.payload. Each message is kept on disk until delivered,
// so a restart or a redeploy runs it again, and a file download continues where it was cut.
import type { MediaMetadata } from '../client/types';
import { STEPS, type Step } from '../contract/fields';
import { checkFileOutput, downloadAsBuffer, downloadIntoFolder, readFileOutput } from './file-output';
import { handleMessages } from './message-jobs';
import { MessageKeeper } from './message-keeper';
import { inputError, readMediaUid, readStep } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-download', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const step = (def.step || 'ENHANCED') as Step;
    const output = readFileOutput(def);
    const { toFile, folder, name } = output;
    const checkSettings = () => {
      if (!(STEPS as readonly string[]).includes(step))
        throw inputError('setting "file"', def.step, `must be one of ${STEPS.join(', ')}`);
      checkFileOutput(output, def);
    };
    checkSettingsAtDeploy(this, checkSettings);
    const keeper = new MessageKeeper(RED, this, def);

    const jobs = handleMessages(
      this,
      async (job) => {
        checkSettings();
        const uid = readMediaUid(job.msg);
        const wanted = readStep(job.msg, step);
        await keeper.keep(job, uid);
        job.media = carriedMetadata(job.msg, uid);
        const client = await service.client();
        if (!toFile) {
          const { payload, contentType } = await downloadAsBuffer(client, uid, wanted, job);
          job.msg.payload = payload;
          job.msg.contentType = contentType;
          return job.msg;
        }
        const written = await downloadIntoFolder(client, uid, wanted, job, {
          folder,
          name,
          workingDirectory: RED.settings.fileWorkingDirectory,
          keepPart: keeper.keeping ? (path) => keeper.notePartFile(job, path) : undefined,
        });
        job.msg.filename = written.path;
        job.msg.contentType = written.contentType;
        return job.msg;
      },
      { text: 'downloading' },
    );
    keeper.resumeInto(jobs);
  });
}

/** The media's metadata when the message carries it (a wait node's msg.payload, or msg.media), for the final status. */
function carriedMetadata(msg: NodeMessage, uid: string): MediaMetadata | undefined {
  for (const candidate of [msg.media, msg.payload]) {
    if (candidate && typeof candidate === 'object' && (candidate as MediaMetadata).uid === uid)
      return candidate as MediaMetadata;
  }
  return undefined;
}
