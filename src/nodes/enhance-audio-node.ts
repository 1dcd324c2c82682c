// media-enhance-audio: asks the service (v1 JSON) to fetch an audio file from a URL and enhance it.
import { basename } from 'node:path';
import { checkEnhanceJsonBody, type EnhanceJsonBody } from '../contract/fields';
import { AUDIO_FIELDS } from './enhancement-fields';
import { mediaNode } from './media-node';
import { inputError } from './input-error';
import { readOverrides } from './msg-inputs';
import type { NodeMessage } from './red';
import type { Translate } from './texts';
import { enhancementOf, withOverrides, type Enhancement } from './enhancement';

/** The URL to fetch: a string msg.payload, else msg.url. */
function readUrl(t: Translate, msg: NodeMessage): { url: string; field: string } {
  if (typeof msg.payload === 'string' && msg.payload.trim() !== '')
    return { url: msg.payload.trim(), field: 'msg.payload' };
  if (typeof msg.url === 'string') return { url: msg.url.trim(), field: 'msg.url' };
  throw inputError(t, 'msg.payload', msg.payload, t('media-enhance-audio.error.urlRequired'));
}

/** The name the service gives the media: msg.filename's base name, the node's setting, or the URL's last segment. */
function fileNameFor(msg: NodeMessage, configured: string, url: string): string {
  if (typeof msg.filename === 'string' && msg.filename.trim() !== '') return basename(msg.filename.trim());
  if (configured) return configured;
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    if (last) return last;
  } catch {
    // the URL's own check names the problem
  }
  return 'media';
}

export default mediaNode(
  'media-enhance-audio',
  { keepsMessages: false, finishesMedia: false },
  ({ def, service, t }) => {
    const configured = enhancementOf(def, AUDIO_FIELDS);
    const configuredName = typeof def.fileName === 'string' ? def.fileName.trim() : '';
    const placeholder = { file_download_url: 'https://example.com/a.wav', file_name: 'a.wav' };
    return {
      checkSettings: () =>
        withOverrides(t, configured, {}, AUDIO_FIELDS, (e) => checkEnhanceJsonBody({ ...placeholder, ...e })),
      handle: async (job) => {
        const { url, field } = readUrl(t, job.msg);
        const fileName = fileNameFor(job.msg, configuredName, url);
        const withInputs = (enhancement: Enhancement) => ({
          ...enhancement,
          file_download_url: url,
          file_name: fileName,
        });
        const enhancement = withOverrides(
          t,
          configured,
          readOverrides(t, job.msg),
          AUDIO_FIELDS,
          (e) => checkEnhanceJsonBody(withInputs(e)),
          {
            file_download_url: field,
            file_name: 'msg.filename',
          },
        );
        const client = await service.client();
        job.show({ text: t('media-enhance-audio.status.requesting') });
        const result = await client.enhanceAudio(withInputs(enhancement) as unknown as EnhanceJsonBody, {
          signal: job.signal,
          onWait: job.onWait,
        });
        job.noteMedia(result.generated_name, fileName);
        job.msg.media_uid = result.generated_name;
        job.msg.payload = result;
        return job.msg;
      },
    };
  },
);
