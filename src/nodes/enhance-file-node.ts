// media-enhance-file: the whole job in one node. A file in (a path or a Buffer), the enhanced file out
// (into a folder or as a Buffer): upload, wait for completion and download through the config node's
// shared client, with the building blocks' statuses, settings and overrides, and the loudness the
// service measured in msg.loudness. The message is kept on disk until delivered: a restart or a redeploy
// goes on where it stopped, uploading a file from a path again only if its upload had not been answered.
import { MediaEnhanceError } from '../client/errors';
import type { MediaMetadata } from '../client/types';
import { DEFAULT_MAX_LIMITING_DB } from '../audio/normalize';
import { SETTINGS_DEFAULTS } from '../contract/fields';
import { enhancementOf, type Enhancement } from './enhancement';
import { joinEpisode, type JoinKeeping } from './episode-join';
import { sweepCutJoins } from './join-folders';
import { readCrossfadeSeconds, readEpisodeParts, type EpisodeParts } from './episode-parts';
import { engineTuning } from './local-engine';
import { checkFileOutput, checkOutputTarget, fileNameProblem, readFileOutput, readIfExists } from './file-output';
import { deliverOutputs, outputsToDeliver } from './deliver-outputs';
import { readSettleMs, waitForInputToSettle } from './file-settle';
import { mediaNode } from './media-node';
import { showMediaStatus, type Job } from './message-jobs';
import { filesMessages, readSendFiles } from './files-message';
import { checkDistinctNames, checkFurtherOutputs, namesBeforeUpload, readFurtherOutputs } from './output-list';
import { remainingMs } from './message-keeper';
import { checkNodeEnhancement, messageEnhancement, sendMessageFile, UPLOAD } from './file-request';
import { inputError } from './input-error';
import { resolvePath } from './msg-inputs';
import type { NodeMessage } from './red';
import type { Translate } from './texts';

/** Input and output loudness, true peak and loudness range, as the media's metadata gives them (null where it does not). */
export function loudnessOf(
  metadata: MediaMetadata,
): Record<'input' | 'output', Record<'integrated_lufs' | 'true_peak_dbtp' | 'loudness_range_lu', number | null>> {
  const params: Record<string, unknown> = metadata.enhancement_params ?? {};
  const figure = (key: string) => {
    const value = params[key];
    return typeof value === 'number' ? value : null;
  };
  const side = (prefix: 'input' | 'output') => ({
    integrated_lufs: figure(`${prefix}_loudness_lufs`),
    true_peak_dbtp: figure(`${prefix}_true_peak_dbtp`),
    loudness_range_lu: figure(`${prefix}_loudness_range_lu`),
  });
  return { input: side('input'), output: side('output') };
}

/**
 * The output file's name: msg.outputFilename, else the node's setting, else the service's. A name with
 * a control character (a newline too, even at its end) or over 255 bytes is refused before anything is sent.
 */
function outputName(t: Translate, msg: NodeMessage, configured: string): string {
  if (msg.outputFilename === undefined) return configured;
  const given = typeof msg.outputFilename === 'string' ? msg.outputFilename : '';
  const problem = fileNameProblem(t, given, 'media-enhance-file.error.plainFileName');
  if (problem !== undefined) throw inputError(t, 'msg.outputFilename', msg.outputFilename, problem);
  return given.trim();
}

/**
 * The intro and outro joined to the episode written at `path`, in place (episode-join.ts), at the
 * message's loudness target; a failure is the node's own (FILE), and the enhanced file can still be had.
 */
async function joinParts(
  t: Translate,
  path: string,
  parts: EpisodeParts,
  enhancement: Enhancement,
  engine: { ffmpegPath: string; maxDecodedBytes?: number },
  uid: string,
  keeping: JoinKeeping,
): Promise<Awaited<ReturnType<typeof joinEpisode>>> {
  const figure = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  const target = {
    targetLufs: figure(enhancement.loudness_target, SETTINGS_DEFAULTS.loudness_target),
    ceilingDbtp: figure(enhancement.true_peak, SETTINGS_DEFAULTS.true_peak),
    maxLimitingDb: DEFAULT_MAX_LIMITING_DB,
  };
  return joinEpisode(path, parts, target, engine.ffmpegPath, keeping, engine.maxDecodedBytes).catch((err: unknown) => {
    throw new MediaEnhanceError(
      'FILE',
      t('media-enhance-file.error.notJoined', { uid, reason: (err as Error).message }),
      {
        mediaUid: uid,
        cause: err,
      },
    );
  });
}

/** A local failure to write a processed media's file: the work is not lost, and the error says where it is. */
function notWritten(t: Translate, err: unknown, uid: string): unknown {
  if (!(err instanceof MediaEnhanceError) || err.code !== 'FILE') return err;
  return new MediaEnhanceError('FILE', t('media-enhance.error.notWritten', { uid, reason: err.message }), {
    mediaUid: uid,
    cause: err,
  });
}

/** The job as the engine's work shows it, saying how many files it makes: "processing 42%, 3 outputs". */
function withOutputCount(job: Job, count: number): Job {
  return {
    ...job,
    show: (status) =>
      job.show({ ...status, text: job.t('media-enhance-file.status.outputs', { status: status.text, count }) }),
  };
}

export default mediaNode(
  'media-enhance-file',
  { keepsMessages: true, finishesMedia: true, uploads: true },
  ({ RED, node, def, service, keeper, t }) => {
    const configured = enhancementOf(def, UPLOAD.fields);
    const output = readFileOutput(def);
    const fileNameSetting = { prop: 'fileName', label: t('media-enhance.setting.fileName') };
    // What a crash left of a join in the node's folder goes at its start (the joins of this process stay).
    if (output.toFile && output.folder !== '')
      void sweepCutJoins(resolvePath(output.folder, RED.settings.fileWorkingDirectory), (line) => node.log(line));
    // The intro and outro are joined here, with the engine's ffmpeg and limit on decoded audio when settings.js sets them.
    const tuning = engineTuning(RED.settings);
    const joining = { ffmpegPath: tuning.ffmpegPath ?? 'ffmpeg', maxDecodedBytes: tuning.maxDecodedBytes };
    const checkSettings = () => {
      checkNodeEnhancement(t, UPLOAD, configured);
      checkFileOutput(t, output, def);
      readSettleMs(t, def);
      readCrossfadeSeconds(t, def);
      readSendFiles(t, def);
      const outputs = readFurtherOutputs(t, def, {});
      checkFurtherOutputs(t, outputs, configured);
      if (output.toFile)
        checkDistinctNames(t, namesBeforeUpload(t, { name: output.name, field: fileNameSetting }, outputs));
    };
    return {
      checkSettings,
      handle: async (job) => {
        // The node's enhancement with the message's overrides, checked once for the message; then the rest
        // of the settings, as at deploy.
        const enhancement = messageEnhancement(UPLOAD, job, configured);
        checkFileOutput(t, output, def);
        readSettleMs(t, def);
        const { msg } = job;
        // The further outputs (the node's list, or msg.outputs) and how the files leave: checked before the upload.
        const outputs = readFurtherOutputs(t, def, msg);
        checkFurtherOutputs(t, outputs, enhancement);
        const sendFiles = readSendFiles(t, def);
        // Checked before the upload: an intro or outro that is not there fails before anything is sent.
        const parts = await readEpisodeParts(t, def, msg, RED.settings.fileWorkingDirectory);
        const target = output.toFile ? outputName(t, msg, output.name) : '';
        const targetField = msg.outputFilename !== undefined ? 'msg.outputFilename' : fileNameSetting;
        if (output.toFile) checkDistinctNames(t, namesBeforeUpload(t, { name: target, field: targetField }, outputs));
        const ifExists = output.toFile ? readIfExists(t, msg, output.ifExists) : output.ifExists;
        // The input's path, so a flow can move the file it handled (msg.filename becomes the output's).
        const inputPath = typeof msg.filename === 'string' && !Buffer.isBuffer(msg.payload) ? msg.filename : undefined;
        const input = inputPath === undefined ? undefined : resolvePath(inputPath, RED.settings.fileWorkingDirectory);
        const place = {
          folder: output.folder,
          name: target,
          ifExists,
          input,
          workingDirectory: RED.settings.fileWorkingDirectory,
        };
        // A delivery resumed after a restart was checked when it started: the file in place may be its own.
        if (output.toFile && keeper.deliveredOf(job).length === 0) await checkOutputTarget(t, place, targetField);
        let uid = keeper.mediaUidOf(msg);
        if (uid === undefined) {
          await keeper.keepBeforeUpload(job);
          await waitForInputToSettle(job, readSettleMs(t, def), RED.settings.fileWorkingDirectory);
          const uploaded = await sendMessageFile(
            UPLOAD,
            service,
            job,
            { configured, enhancement, outputs },
            RED.settings.fileWorkingDirectory,
          );
          uid = uploaded.uid;
          job.noteMedia(uid, uploaded.file_name);
        } else {
          job.noteMedia(uid);
        }
        const mediaSince = await keeper.keep(job, uid);
        const client = await service.client();
        const timeoutMs = service.waitTimeoutMs();
        const media = await client.waitForCompletion(uid, {
          signal: job.signal,
          timeoutMs: remainingMs(timeoutMs, mediaSince),
          onStatus: showMediaStatus(
            outputs.request.length > 0 ? withOutputCount(job, outputs.request.length + 1) : job,
          ),
        });
        // Processed: a failure from here on leaves an enhanced file that the sidebar's result row offers.
        job.media = media;
        // The patterns filled in from the media: two names that meet now fail the message before any file is written.
        const wanted = outputsToDeliver(t, { name: target, field: targetField }, outputs, media);
        if (output.toFile)
          checkDistinctNames(
            t,
            wanted.map(({ fileName, field }) => ({ name: fileName, field })),
          );
        const files = await deliverOutputs(
          job,
          client,
          media.uid,
          wanted,
          {
            toFile: output.toFile,
            ...place,
            ...keeper.deliveryKeeping(job),
          },
          parts
            ? (path, beforeReplace) =>
                joinParts(t, path, parts, enhancement, joining, media.uid, { signal: job.signal, beforeReplace })
            : undefined,
          (err) => notWritten(t, err, media.uid),
        );
        if (inputPath !== undefined) msg.inputFilename = inputPath;
        msg.media_uid = media.uid;
        msg.media = media;
        msg.loudness = loudnessOf(media);
        return filesMessages(msg, files, sendFiles, true);
      },
    };
  },
);
