// media-enhance-video: uploads a video (Buffer or path) and starts its enhancement (v1 multipart).
import { checkEnhancementSettings } from '../contract/fields';
import { VIDEO_FIELDS } from './enhancement-fields';
import { handleMessages } from './message-jobs';
import { readFileInput, readOverrides } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, RedApi, RedNode } from './red';
import { applyOverrides, settingsFromNode, type Settings } from './settings';

const check = (settings: Settings) => checkEnhancementSettings(settings, 'video_enhancement');

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-video', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const configured = settingsFromNode(def, VIDEO_FIELDS);
    checkSettingsAtDeploy(this, () => applyOverrides(configured, {}, VIDEO_FIELDS, check));

    handleMessages(this, async (job) => {
      const settings = applyOverrides(configured, readOverrides(job.msg), VIDEO_FIELDS, check);
      const { file, fileName } = await readFileInput(job.msg, RED.settings.fileWorkingDirectory);
      const client = await service.client();
      const record = await client.enhanceVideo(
        { file, fileName, video_enhancement: Object.keys(settings).length > 0 ? settings : null },
        { signal: job.signal, onWait: job.onWait, onProgress: job.progress('uploading') },
      );
      job.msg.media_uid = record.uid;
      job.msg.payload = record;
      return job.msg;
    });
  });
}
