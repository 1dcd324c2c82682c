// media-enhance-download: fetches a media's file, into a folder (written atomically: a temporary file
// renamed when complete) or as a Buffer in msg.payload.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { STEPS, type Step } from '../contract/fields';
import { handleMessages, type Job } from './message-jobs';
import { inputError, readMediaUid, readStep, resolvePath } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { MediaEnhanceClient } from '../client/client';
import type { NodeDef, RedApi, RedNode } from './red';

/** A name for a file inside the folder: no folder part, nothing hidden behind "." or "..". */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && !/[/\\\0]/.test(name) && name !== '.' && name !== '..';
}

async function toBuffer(client: MediaEnhanceClient, uid: string, step: Step, job: Job): Promise<{ payload: Buffer; contentType: string }> {
  const onProgress = job.progress('downloading');
  const file = await client.downloadFile(uid, { step, signal: job.signal, onWait: job.onWait });
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of file.stream) {
    chunks.push(chunk as Buffer);
    received += (chunk as Buffer).length;
    onProgress(received, file.size);
  }
  return { payload: Buffer.concat(chunks, received), contentType: file.contentType };
}

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-download', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const toFile = def.output !== 'buffer';
    const step = (def.step || 'ENHANCED') as Step;
    const folder = typeof def.folder === 'string' ? def.folder.trim() : '';
    const name = typeof def.fileName === 'string' ? def.fileName.trim() : '';
    const checkSettings = () => {
      if (!(STEPS as readonly string[]).includes(step)) throw inputError('setting "file"', def.step, `must be one of ${STEPS.join(', ')}`);
      if (toFile && folder === '') throw inputError('setting "folder"', def.folder, 'a folder is required to write files to');
      if (name !== '' && !isPlainFileName(name)) throw inputError('setting "file name"', def.fileName, 'must be a file name without a folder part, or empty for the name the service gives');
    };
    checkSettingsAtDeploy(this, checkSettings);

    handleMessages(
      this,
      async (job) => {
        checkSettings();
        const uid = readMediaUid(job.msg);
        const wanted = readStep(job.msg, step);
        const client = await service.client();
        if (!toFile) {
          const { payload, contentType } = await toBuffer(client, uid, wanted, job);
          job.msg.payload = payload;
          job.msg.contentType = contentType;
          return job.msg;
        }
        const dir = resolvePath(folder, RED.settings.fileWorkingDirectory);
        await fsp.mkdir(dir, { recursive: true });
        const written = await client.downloadToFile(uid, name ? join(dir, name) : dir, {
          step: wanted,
          signal: job.signal,
          onWait: job.onWait,
          onProgress: job.progress('downloading'),
        });
        job.msg.filename = written.path;
        job.msg.contentType = written.contentType;
        return job.msg;
      },
      { text: 'downloading' },
    );
  });
}
