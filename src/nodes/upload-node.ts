// media-enhance-upload: sends a file (Buffer or path) to the service (v2) and passes on its media uid.
// A file from a path is kept on disk until its message is sent on, so an upload queued or cut by a
// restart or a redeploy is made when the node starts again (a Buffer cannot be kept: the stop warns).
import { UPLOAD_FIELDS } from './enhancement-fields';
import { handleMessages } from './message-jobs';
import { MessageKeeper } from './message-keeper';
import { checkUploadSettings, uploadMessageFile } from './message-upload';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, RedApi, RedNode } from './red';
import { settingsFromNode } from './settings';

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-upload', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const configured = settingsFromNode(def, UPLOAD_FIELDS);
    checkSettingsAtDeploy(this, () => checkUploadSettings(configured));
    const keeper = new MessageKeeper(RED, this, def);

    const jobs = handleMessages(this, async (job) => {
      await keeper.keepBeforeUpload(job);
      const metadata = await uploadMessageFile(service, job, configured, RED.settings.fileWorkingDirectory);
      job.msg.media_uid = metadata.uid;
      job.msg.payload = metadata;
      return job.msg;
    });
    keeper.resumeInto(jobs);
  });
}
