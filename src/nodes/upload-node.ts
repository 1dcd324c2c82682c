// media-enhance-upload: sends a file (Buffer or path) to the service (v2) and passes on its media uid.
import { UPLOAD_FIELDS } from './enhancement-fields';
import { handleMessages } from './message-jobs';
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

    handleMessages(this, async (job) => {
      const { metadata } = await uploadMessageFile(service, job, configured, RED.settings.fileWorkingDirectory);
      job.msg.media_uid = metadata.uid;
      job.msg.payload = metadata;
      return job.msg;
    });
  });
}
