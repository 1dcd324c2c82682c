#!/usr/bin/env node
// media-enhance-engine: runs the local engine from a shell.
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEngine, type EngineOptions, type RetentionOptions } from './index';

const HELP = `Usage: media-enhance-engine [options]

Runs the local media enhancement engine: the service interface on loopback.

Options:
  --host <address>              interface to listen on (default 127.0.0.1)
  --port <n>                    port, 0 for any free one (default 8600)
  --data-dir <folder>           where media are kept; a restart resumes them (default ./media-enhance-data)
  --key <key>                   accepted API key; repeat for several. Also MEDIA_ENHANCE_KEYS (comma-separated).
                                Without one, a key is made and kept in <data-dir>/api-key (never printed)
  --window-ms <ms>              rate-limit window (default 60000)
  --limit-upload <n>            POST /v2/medias per window (default 10)
  --limit-metadata <n>          GET .../metadata per window (default 120)
  --limit-download <n>          GET .../file per window (default 60)
  --limit-enhance-audio <n>     POST /v1/media/enhance-json per window (default: none)
  --limit-enhance-video <n>     POST /v1/videos per window (default: none)
  --max-upload-bytes <n>        largest accepted file (default 2147483648)
  --processing-delay-ms <ms>    extra time each media spends PROCESSING (default 0)
  --workers <n>                 processing worker threads (default: cores, at most 4)
  --fetch-timeout-ms <ms>       time limit of the enhance-json fetch (default 60000)
  --ffmpeg <path>               ffmpeg program for formats other than WAV (default: ffmpeg on the PATH)
  --max-limiting-db <dB>        most gain reduction the true-peak limiter may apply, 0 or more (default 8);
                                a loudness target that needs more is left unreached, and the media says so
  --keep-hours <h>              finished media go this long after their last use (default 168; 0 keeps them)
  --keep-mib <n>                the oldest finished media go while all take more (default 5120; 0: no limit)
  --fault-500 <p>               probability of a 500 answer
  --fault-503 <p>               probability of a 503 answer
  --fault-reset <p>             probability of a connection reset halfway through a response
  --fault-drip <p>              probability of a slowly dripping response
  --fault-drip-bps <n>          speed of a dripping response (default 16384 bytes/s)
  --fault-429 <n>               answer the next n rate-limited requests 429
  --fault-fail-processing <p>   probability that processing ends FAILED
  --quiet                       no access log
  -h, --help                    this text
`;

const numberOption = { type: 'string' } as const;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: numberOption,
      'data-dir': { type: 'string' },
      key: { type: 'string', multiple: true },
      'window-ms': numberOption,
      'limit-upload': numberOption,
      'limit-metadata': numberOption,
      'limit-download': numberOption,
      'limit-enhance-audio': numberOption,
      'limit-enhance-video': numberOption,
      'max-upload-bytes': numberOption,
      'processing-delay-ms': numberOption,
      workers: numberOption,
      'fetch-timeout-ms': numberOption,
      ffmpeg: { type: 'string' },
      'max-limiting-db': numberOption,
      'keep-hours': numberOption,
      'keep-mib': numberOption,
      'fault-500': numberOption,
      'fault-503': numberOption,
      'fault-reset': numberOption,
      'fault-drip': numberOption,
      'fault-drip-bps': numberOption,
      'fault-429': numberOption,
      'fault-fail-processing': numberOption,
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const num = (name: keyof typeof values): number | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new Error(`--${name}: a number is required (got "${String(raw)}")`);
    return value;
  };
  const maxLimitingDb = num('max-limiting-db');
  if (maxLimitingDb !== undefined && maxLimitingDb < 0) throw new Error(`--max-limiting-db: the limiter's gain reduction is 0 dB or more (got "${values['max-limiting-db']}")`);
  const dataDir = resolve(values['data-dir'] ?? 'media-enhance-data');
  await fsp.mkdir(dataDir, { recursive: true });
  const keys = [...(values.key ?? []), ...(process.env.MEDIA_ENHANCE_KEYS ?? '').split(',').filter(Boolean)];
  let keyNote = `${keys.length} key(s) from the command line or MEDIA_ENHANCE_KEYS`;
  if (keys.length === 0) {
    const keyFile = join(dataDir, 'api-key');
    keys.push(await readOrMakeKey(keyFile));
    keyNote = `the key in ${keyFile}`;
  }
  const limits: EngineOptions['limits'] = {};
  for (const [option, endpoint] of [
    ['limit-upload', 'uploadMedia'],
    ['limit-metadata', 'getMetadata'],
    ['limit-download', 'downloadFile'],
    ['limit-enhance-audio', 'enhanceAudio'],
    ['limit-enhance-video', 'enhanceVideo'],
  ] as const) {
    const value = num(option);
    if (value !== undefined) limits[endpoint] = value;
  }
  const engine = await startEngine({
    host: values.host,
    port: num('port') ?? 8600,
    apiKeys: keys,
    dataDir,
    limits,
    windowMs: num('window-ms'),
    maxUploadBytes: num('max-upload-bytes'),
    processingDelayMs: num('processing-delay-ms'),
    workers: num('workers'),
    fetchTimeoutMs: num('fetch-timeout-ms'),
    ffmpegPath: values.ffmpeg,
    maxLimitingDb,
    retention: retentionOptions(num('keep-hours'), num('keep-mib')),
    onRemoved: ({ record, reason }) => process.stdout.write(`removed media ${record.uid} ("${record.file_name}"): ${reason}\n`),
    faults: {
      error500Rate: num('fault-500'),
      error503Rate: num('fault-503'),
      resetRate: num('fault-reset'),
      dripRate: num('fault-drip'),
      dripBytesPerSecond: num('fault-drip-bps'),
      forced429: num('fault-429'),
      failProcessingRate: num('fault-fail-processing'),
    },
    onLogLine: values.quiet ? undefined : (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`media enhancement engine listening on ${engine.url} (data in ${dataDir}; accepts ${keyNote})\n`);
  const stop = () => {
    process.stdout.write('stopping...\n');
    engine.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The CLI's hours and MiB, 0 meaning no limit, as the engine's options. */
function retentionOptions(hours: number | undefined, mebibytes: number | undefined): Partial<RetentionOptions> {
  const retention: Partial<RetentionOptions> = {};
  if (hours !== undefined) retention.maxAgeMs = hours === 0 ? null : hours * 3600_000;
  if (mebibytes !== undefined) retention.maxTotalBytes = mebibytes === 0 ? null : mebibytes * 1024 ** 2;
  return retention;
}

async function readOrMakeKey(file: string): Promise<string> {
  try {
    const key = (await fsp.readFile(file, 'utf8')).trim();
    if (key) return key;
  } catch {
    // none yet
  }
  const key = randomBytes(24).toString('base64url');
  await fsp.writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}

main().catch((err: unknown) => {
  process.stderr.write(`media-enhance-engine: ${(err as Error).message}\n`);
  process.exit(1);
});
