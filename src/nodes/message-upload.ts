// The upload step of a message, shared by upload and enhance file: the node's settings with the
// message's overrides, the file from msg.payload or msg.filename, sent with the job's progress.
import type { MediaMetadata } from '../client/types';
import { checkEnhancementSettings } from '../contract/fields';
import { UPLOAD_FIELDS } from './enhancement-fields';
import type { Job } from './message-jobs';
import { readFileInput, readOverrides } from './msg-inputs';
import type { NodeService } from './node-service';
import { applyOverrides, type Settings } from './settings';

/** The node's own upload settings, checked at deploy as they will be for every message. */
export function checkUploadSettings(configured: Settings): void {
  applyOverrides(configured, {}, UPLOAD_FIELDS, checkMediaEnhancement);
}

/** Reads the message's file and settings (bad input fails before anything is sent) and uploads it. */
export async function uploadMessageFile(
  service: NodeService,
  job: Job,
  configured: Settings,
  workingDirectory: string | undefined,
): Promise<MediaMetadata> {
  const settings = applyOverrides(configured, readOverrides(job.msg), UPLOAD_FIELDS, checkMediaEnhancement);
  const { file, fileName } = await readFileInput(job.msg, workingDirectory);
  const client = await service.client();
  return client.uploadMedia(
    { file, fileName, media_enhancement: Object.keys(settings).length > 0 ? settings : null },
    { signal: job.signal, onWait: job.onWait, onProgress: job.progress('uploading') },
  );
}

const checkMediaEnhancement = (settings: Settings) => checkEnhancementSettings(settings, 'media_enhancement');
