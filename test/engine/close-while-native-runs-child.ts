// The child process of close-while-native-runs.test.ts: starts an engine, uploads two minutes of speech
// for the default model, closes the engine at a different moment of the work each round, and prints
// what it saw. An abort ends it before it prints "done".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../../src';
import { startEngine } from '../../src/engine';
import { encodeWav, speechLike } from '../fixtures/audio';

async function main(): Promise<void> {
  const speech = encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, speechLike(48_000, 1)(120 * 48_000));
  for (let round = 0; round < 5; round++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'me-native-close-'));
    const engine = await startEngine({ apiKeys: ['key'], dataDir, workers: 2, onErrorLine: () => undefined });
    const client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: 'key' });
    try {
      const { uid } = await client.uploadMedia({ file: speech, fileName: 'talk.wav' });
      // Wait until the work has moved, then a little longer each round.
      for (;;) {
        const metadata = (await client.getMetadata(uid)) as {
          enhancement_status: string;
          progress?: { percent: number };
        };
        if (metadata.enhancement_status !== 'PENDING' && (metadata.progress?.percent ?? 0) > round * 3) {
          console.log(`closed while ${metadata.enhancement_status} at ${metadata.progress?.percent ?? 100}%`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await client.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const { nativeRuntime } = await import('../../src/enhance/onnx-runtimes');
  console.log(nativeRuntime().available ? 'native' : 'wasm');
  console.log('done');
}

void main();
