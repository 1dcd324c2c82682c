// One instance of the multi-process tests and the benchmark: a client process that uploads media for a
// while, as fast as its limiter lets it, and waits for each to complete. It prints one JSON line of
// what it did. Run as `node shared-limiter-worker.js '<WorkerConfig as JSON>'`.
import { MediaEnhanceClient, type SharingState } from '../../src';
import { makeWav } from '../fixtures/media';

export interface WorkerConfig {
  baseUrl: string;
  apiKey: string;
  /** Unset: this instance keeps its own windows (it does not share through Redis). */
  redisUrl?: string;
  windowMs: number;
  limits: { uploadMedia: number; getMetadata: number };
  /** Uploads start until this long after the start; then the worker waits for what it started. */
  durationMs: number;
  /** Uploads under way at once. */
  lanes: number;
  /** Added to this process's clock, as on a machine whose clock is off. */
  clockSkewMs?: number;
}

export interface WorkerResult {
  uploads: number;
  completed: number;
  failed: string[];
  /** Each change of the sharing state, in order. */
  states: SharingState[];
  /** When the lanes began asking for places, and when they stopped starting uploads (this machine's clock). */
  askedFrom: number;
  askedUntil: number;
  /** When each upload was accepted, in order. */
  uploadedAt: number[];
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]) as WorkerConfig;
  const skew = config.clockSkewMs ?? 0;
  const states: SharingState[] = [];
  const client = new MediaEnhanceClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    windowMs: config.windowMs,
    limits: config.limits,
    poll: { initialMs: [300, 500], longMs: [500, 800], longAfterMs: 60_000 },
    clock:
      skew === 0
        ? undefined
        : {
            now: () => Date.now() + skew,
            setTimeout: (fn, ms) => setTimeout(fn, ms),
            clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
          },
    sharedLimiter: config.redisUrl
      ? { redisUrl: config.redisUrl, keyPrefix: 'test', onStateChange: (s) => states.push(s) }
      : undefined,
  });
  const wav = makeWav(0.05, 8_000);
  const end = Date.now() + config.durationMs;
  const result: WorkerResult = {
    uploads: 0,
    completed: 0,
    failed: [],
    states,
    askedFrom: Date.now(),
    askedUntil: end,
    uploadedAt: [],
  };
  const waits: Promise<void>[] = [];
  const lane = async () => {
    while (Date.now() < end) {
      try {
        const media = await client.uploadMedia({ file: wav });
        result.uploads++;
        result.uploadedAt.push(Date.now());
        waits.push(
          client.waitForCompletion(media.uid, { timeoutMs: 120_000 }).then(
            () => void result.completed++,
            (err: Error) => void result.failed.push(`wait: ${err.message}`),
          ),
        );
      } catch (err) {
        result.failed.push(`upload: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: config.lanes }, lane));
  await Promise.all(waits);
  await client.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
