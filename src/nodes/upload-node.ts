// media-enhance-upload: sends a file (Buffer or path) to the service (v2) and passes on its media uid.
import { checkEnhancementSettings } from '../contract/fields';
import { UPLOAD_FIELDS } from './enhancement-fields';
import { handleMessages } from './message-jobs';
import { readFileInput, readOverrides } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, RedApi, RedNode } from './red';
import { applyOverrides, settingsFromNode, type Settings } from './settings';

const check = (settings: Settings) => checkEnhancementSettings(settings, 'media_enhancement');

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-upload', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const configured = settingsFromNode(def, UPLOAD_FIELDS);
    checkSettingsAtDeploy(this, () => applyOverrides(configured, {}, UPLOAD_FIELDS, check));

    handleMessages(this, async (job) => {
      const settings = applyOverrides(configured, readOverrides(job.msg), UPLOAD_FIELDS, check);
      const { file, fileName } = await readFileInput(job.msg, RED.settings.fileWorkingDirectory);
      const client = await service.client();
      const metadata = await client.uploadMedia(
        { file, fileName, media_enhancement: Object.keys(settings).length > 0 ? settings : null },
        { signal: job.signal, onWait: job.onWait, onProgress: job.progress('uploading') },
      );
      job.msg.media_uid = metadata.uid;
      job.msg.payload = metadata;
      return job.msg;
    });
  });
}
