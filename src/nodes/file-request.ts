// The operations that send a file with an enhancement: upload (v2 `media_enhancement`), used by the
// upload and enhance file nodes, and enhance video (v1 multipart `video_enhancement`). A message's
// request is the node's enhancement with the message's overrides, and the file from msg.payload or
// msg.filename, sent with the job's progress.
import type { MediaEnhanceClient, TransferOptions } from '../client/client';
import type { MediaMetadata, VideoRecord } from '../client/types';
import { SEVERAL_OUTPUTS, usesExtension } from '../contract/extensions';
import { checkEnhancementSettings } from '../contract/fields';
import { withOverrides, type Enhancement, type EnhancementField } from './enhancement';
import { UPLOAD_FIELDS, VIDEO_FIELDS } from './enhancement-fields';
import type { Job } from './message-jobs';
import { readFileInput, readOverrides, type FileToSend } from './msg-inputs';
import { inputError } from './input-error';
import { outputsField, type FurtherOutputs } from './output-list';
import type { NodeService } from './node-service';
import type { Translate } from './texts';

export interface FileRequest<Answer extends { uid: string }> {
  fields: readonly EnhancementField[];
  /** The request member that carries the enhancement (null when the node sets none). */
  part: 'media_enhancement' | 'video_enhancement';
  send(
    client: MediaEnhanceClient,
    file: FileToSend,
    part: Enhancement | null,
    options: TransferOptions,
  ): Promise<Answer>;
}

export const UPLOAD: FileRequest<MediaMetadata> = {
  fields: UPLOAD_FIELDS,
  part: 'media_enhancement',
  send: (client, file, media_enhancement, options) => client.uploadMedia({ ...file, media_enhancement }, options),
};

export const ENHANCE_VIDEO: FileRequest<VideoRecord> = {
  fields: VIDEO_FIELDS,
  part: 'video_enhancement',
  send: (client, file, video_enhancement, options) => client.enhanceVideo({ ...file, video_enhancement }, options),
};

/** The node's own enhancement, checked at deploy as it will be for every message. */
export function checkNodeEnhancement<Answer extends { uid: string }>(
  t: Translate,
  request: FileRequest<Answer>,
  configured: Enhancement,
): void {
  withOverrides(t, configured, {}, request.fields, (enhancement) =>
    checkEnhancementSettings(enhancement, request.part),
  );
}

/**
 * The message's enhancement: the node's with the message's overrides, merged and checked once for the
 * message, so bad input fails before anything is read or sent (what the service declares is asked only
 * when an extension is used, in sendMessageFile).
 */
export function messageEnhancement<Answer extends { uid: string }>(
  request: FileRequest<Answer>,
  job: Job,
  configured: Enhancement,
): Enhancement {
  return withOverrides(job.t, configured, readOverrides(job.t, job.msg), request.fields, (merged) =>
    checkEnhancementSettings(merged, request.part),
  );
}

/** Reads the message's file and sends the request with the message's enhancement (messageEnhancement). */
export async function sendMessageFile<Answer extends { uid: string }>(
  request: FileRequest<Answer>,
  service: NodeService,
  job: Job,
  given: { configured: Enhancement; enhancement: Enhancement; outputs?: FurtherOutputs },
  workingDirectory: string | undefined,
): Promise<Answer> {
  const file = await readFileInput(job.t, job.msg, workingDirectory);
  const client = await service.client();
  // Further outputs are the built-in engine's several-outputs extension: a service that does not declare
  // it is named here, with the list, before anything is sent.
  const outputs = given.outputs?.request ?? [];
  if (outputs.length > 0) {
    const declared = await client.declaredExtensions();
    if (!declared.includes(SEVERAL_OUTPUTS))
      throw inputError(
        job.t,
        outputsField(job.t, given.outputs!.from),
        outputs.map((output) => output.name),
        job.t('media-enhance-file.rule.severalOutputs', { extension: SEVERAL_OUTPUTS }),
      );
  }
  // What the service declares is asked of it once, and only when an extension is used: an extension
  // member a remote service does not declare is refused here, named as the flow author gave it (setting
  // or msg.enhancement member). Without one, the message's single check (messageEnhancement) stands.
  const { configured, enhancement } = given;
  if (usesExtension(enhancement)) {
    const declared = await client.declaredExtensions();
    withOverrides(job.t, configured, readOverrides(job.t, job.msg), request.fields, (merged) =>
      checkEnhancementSettings(merged, request.part, declared),
    );
  }
  const sent = outputs.length > 0 ? { ...enhancement, outputs } : enhancement;
  return request.send(client, file, Object.keys(sent).length > 0 ? sent : null, {
    signal: job.signal,
    onWait: job.onWait,
    onProgress: job.progress('uploading'),
  });
}
