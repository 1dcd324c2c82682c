// media-enhance-download: fetches a media's file, into a folder (written atomically: a temporary file
// renamed when complete) or as a Buffer in msg.payload. Each message is kept on disk until delivered,
// so a restart or a redeploy runs it again, and a file download continues where it was cut. With
// `attachLoudness`, the media's loudness report (a local-engine extension) goes along in msg.loudness.
import type { MediaEnhanceClient } from '../client/client';
import type { MediaMetadata } from '../client/types';
import type { LoudnessReport } from '../contract/loudness-report';
import { appliedOutputsOf, STEPS, type Step } from '../contract/fields';
import { DOWNLOAD_SWITCH_DEFAULTS } from './download-settings';
import { checkFileOutput, checkOutputTarget, downloadAsBuffer, readFileOutput, readIfExists } from './file-output';
import { mediaNode } from './media-node';
import { deliverOutputs } from './deliver-outputs';
import { filesMessages } from './files-message';
import { readFilesChoice } from './files-choice';
import { FIRST_OUTPUT_NAME } from './output-list';
import { inputError } from './input-error';
import { readMediaUid, readStep } from './msg-inputs';
import type { Job } from './message-jobs';
import type { NodeMessage } from './red';

export default mediaNode(
  'media-enhance-download',
  { keepsMessages: true, finishesMedia: true },
  ({ RED, node, def, service, keeper, t }) => {
    const step = (def.step || 'ENHANCED') as Step;
    const output = readFileOutput(def);
    const { toFile, folder, name } = output;
    const fileNameSetting = { prop: 'fileName', label: t('media-enhance.setting.fileName') };
    const attachLoudness =
      typeof def.attachLoudness === 'boolean' ? def.attachLoudness : DOWNLOAD_SWITCH_DEFAULTS.attachLoudness;
    const checkSettings = () => {
      if (!(STEPS as readonly string[]).includes(step))
        throw inputError(
          t,
          { prop: 'step', label: t('media-enhance-download.setting.step') },
          def.step,
          t('media-enhance.rule.oneOf', { values: STEPS.join(', ') }),
        );
      checkFileOutput(t, output, def);
      readFilesChoice(t, def, {});
    };
    return {
      checkSettings,
      firstStatus: { text: t('media-enhance-download.status.downloading') },
      handle: async (job) => {
        checkSettings();
        const uid = readMediaUid(t, job.msg);
        const wanted = readStep(t, job.msg, step);
        const ifExists = toFile ? readIfExists(t, job.msg, output.ifExists) : output.ifExists;
        const workingDirectory = RED.settings.fileWorkingDirectory;
        // A delivery resumed after a restart was checked when it started: the file in place may be its own.
        if (toFile && keeper.deliveredOf(job).length === 0)
          await checkOutputTarget(t, { folder, name, ifExists, workingDirectory }, fileNameSetting);
        job.noteMedia(uid);
        await keeper.keep(job, uid);
        job.media = carriedMetadata(job.msg, uid);
        const client = await service.client();
        const chosen = readFilesChoice(t, def, job.msg);
        if (chosen.files !== 'step') {
          // Every output the media has, or the named ones: the enhanced file and the media's named steps.
          const media = await client.getMetadata(uid, { signal: job.signal, onWait: job.onWait });
          job.media = media;
          const names =
            chosen.files === 'all' ? [FIRST_OUTPUT_NAME, ...appliedOutputsOf(media).map((o) => o.name)] : chosen.names;
          // The enhanced file under the node's file name; the further outputs under the service's names.
          const wantedFiles = names.map((outputName) =>
            outputName === FIRST_OUTPUT_NAME
              ? { name: outputName, step: 'ENHANCED', fileName: name }
              : { name: outputName, step: outputName, fileName: '' },
          );
          const place = {
            toFile,
            folder,
            ifExists,
            workingDirectory,
            ...keeper.deliveryKeeping(job),
          };
          const files = await deliverOutputs(job, client, uid, wantedFiles, place, undefined, (err) => err);
          job.finishesMedia = true;
          const out = filesMessages(job.msg, files, chosen.send, false);
          if (attachLoudness) {
            const loudness = await loudnessOrNull(client, uid, job, (text) => node.warn(text));
            for (const msg of Array.isArray(out) ? out : [out]) msg.loudness = loudness;
          }
          return out;
        }
        if (!toFile) {
          const { payload, contentType } = await downloadAsBuffer(client, uid, wanted, job);
          job.msg.payload = payload;
          job.msg.contentType = contentType;
        } else {
          // As enhance file delivers its files: kept with the message as it is put in place, so a restart
          // right after hands it on rather than fetching a second copy beside it.
          const place = { toFile, folder, ifExists, workingDirectory, ...keeper.deliveryKeeping(job) };
          const [written] = await deliverOutputs(
            job,
            client,
            uid,
            [{ name: wanted, step: wanted, fileName: name }],
            place,
            undefined,
            (err) => err,
          );
          job.msg.filename = written.path;
          job.msg.contentType = written.contentType;
        }
        // Only the enhanced file means the media is finished: an original fetched earlier is no result.
        job.finishesMedia = wanted === 'ENHANCED';
        if (attachLoudness) job.msg.loudness = await loudnessOrNull(client, uid, job, (text) => node.warn(text));
        return job.msg;
      },
    };
  },
);

/**
 * The report, or null when the service offers none for this media (a remote without the extension) or
 * cannot give it now (an original fetched before processing ended, the service away): the file is
 * written already, so the message goes on without it and a warning says why.
 */
async function loudnessOrNull(
  client: MediaEnhanceClient,
  uid: string,
  job: Job,
  warn: (text: string) => void,
): Promise<LoudnessReport | null> {
  try {
    return await client.getLoudnessReport(uid, { signal: job.signal, onWait: job.onWait });
  } catch (err) {
    if (job.signal.aborted) throw err;
    warn(job.t('media-enhance-download.warn.noLoudness', { uid, error: (err as Error).message }));
    return null;
  }
}

/** The media's metadata when the message carries it (a wait node's msg.payload, or msg.media), for the final status. */
function carriedMetadata(msg: NodeMessage, uid: string): MediaMetadata | undefined {
  for (const candidate of [msg.media, msg.payload]) {
    if (candidate && typeof candidate === 'object' && (candidate as MediaMetadata).uid === uid)
      return candidate as MediaMetadata;
  }
  return undefined;
}
