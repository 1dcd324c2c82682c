// media-enhance-file: the whole job in one node. A file in (a path or a Buffer), the enhanced file out
// (into a folder or as a Buffer): upload, wait for completion and download through the config node's
// shared client, with the building blocks' statuses, settings and overrides, and the loudness the
// service measured in msg.loudness. The message is kept on disk until delivered: a restart or a redeploy
// goes on where it stopped, uploading a file from a path again only if its upload had not been answered.
import type { MediaMetadata } from '../client/types';
import { UPLOAD_FIELDS } from './enhancement-fields';
import { checkFileOutput, downloadAsBuffer, downloadIntoFolder, isPlainFileName, readFileOutput } from './file-output';
import { handleMessages, showMediaStatus } from './message-jobs';
import { MessageKeeper, remainingMs } from './message-keeper';
import { checkUploadSettings, uploadMessageFile } from './message-upload';
import { inputError } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';
import { settingsFromNode } from './settings';

/** Input and output loudness, true peak and loudness range, as the media's metadata gives them (null where it does not). */
export function loudnessOf(
  metadata: MediaMetadata,
): Record<'input' | 'output', Record<'integrated_lufs' | 'true_peak_dbtp' | 'loudness_range_lu', number | null>> {
  const params = metadata.enhancement_params ?? {};
  const figure = (key: string) => (typeof params[key] === 'number' ? params[key] : null);
  const side = (prefix: 'input' | 'output') => ({
    integrated_lufs: figure(`${prefix}_loudness_lufs`),
    true_peak_dbtp: figure(`${prefix}_true_peak_dbtp`),
    loudness_range_lu: figure(`${prefix}_loudness_range_lu`),
  });
  return { input: side('input'), output: side('output') };
}

/** The output file's name: msg.outputFilename, else the node's setting, else the service's. */
function outputName(msg: NodeMessage, configured: string): string {
  if (msg.outputFilename === undefined) return configured;
  const name = typeof msg.outputFilename === 'string' ? msg.outputFilename.trim() : '';
  if (!isPlainFileName(name))
    throw inputError('msg.outputFilename', msg.outputFilename, 'must be a file name without a folder part');
  return name;
}

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-file', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const configured = settingsFromNode(def, UPLOAD_FIELDS);
    const output = readFileOutput(def);
    const checkSettings = () => {
      checkUploadSettings(configured);
      checkFileOutput(output, def);
    };
    checkSettingsAtDeploy(this, checkSettings);
    const keeper = new MessageKeeper(RED, this, def);

    const jobs = handleMessages(this, async (job) => {
      checkSettings();
      const { msg } = job;
      const target = output.toFile ? outputName(msg, output.name) : '';
      // The input's path, so a flow can move the file it handled (msg.filename becomes the output's).
      const inputPath = typeof msg.filename === 'string' && !Buffer.isBuffer(msg.payload) ? msg.filename : undefined;
      let uid = keeper.mediaUidOf(msg);
      if (uid === undefined) {
        await keeper.keepBeforeUpload(job);
        uid = (await uploadMessageFile(service, job, configured, RED.settings.fileWorkingDirectory)).uid;
      }
      const mediaSince = await keeper.keep(job, uid);
      const client = await service.client();
      const timeoutMs = service.waitTimeoutMs();
      const media = await client.waitForCompletion(uid, {
        signal: job.signal,
        timeoutMs: remainingMs(timeoutMs, mediaSince),
        onStatus: showMediaStatus(job),
      });
      if (output.toFile) {
        const written = await downloadIntoFolder(client, media.uid, 'ENHANCED', job, {
          folder: output.folder,
          name: target,
          workingDirectory: RED.settings.fileWorkingDirectory,
          keepPart: keeper.keeping ? (path) => keeper.notePartFile(job, path) : undefined,
        });
        msg.filename = written.path;
        msg.payload = written.path;
        msg.contentType = written.contentType;
      } else {
        const { payload, contentType } = await downloadAsBuffer(client, media.uid, 'ENHANCED', job);
        msg.payload = payload;
        msg.contentType = contentType;
      }
      if (inputPath !== undefined) msg.inputFilename = inputPath;
      msg.media_uid = media.uid;
      msg.media = media;
      msg.loudness = loudnessOf(media);
      job.media = media;
      return msg;
    });
    keeper.resumeInto(jobs);
  });
}
