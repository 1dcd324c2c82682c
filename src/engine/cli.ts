#!/usr/bin/env node
// media-enhance-engine: runs the local engine from a shell.
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEngine, type EngineOptions, type RetentionOptions } from './index';
import { parseNetworks } from './jobs/address-policy';
import { resolveStorage, RULES, withoutPassword, type NumberRule } from './options';

const HELP = `Usage: media-enhance-engine [options]

Runs the local media enhancement engine: the service interface on loopback.

Keys (all those given are accepted):
  MEDIA_ENHANCE_KEYS            environment variable: accepted API keys, comma-separated
  --key-file <path>             a file holding the accepted keys, one per line (keep it mode 600)
  --key <key>                   an accepted key; repeat for several. Other users of this machine can
                                read it in the process list (ps): prefer the two above
  Without any, a key is made and kept in <data-dir>/api-key (never printed).

Options:
  --host <address>              interface to listen on (default 127.0.0.1, this machine only)
  --port <n>                    port, 0 for any free one (default 8600)
  --data-dir <folder>           where media are kept, readable by this account only; a restart resumes
                                them (default ./media-enhance-data)
  --storage s3://<bucket>/<prefix>
                                keep media files in this S3 bucket (made when missing) instead of
                                --data-dir, which then holds records and work files only; credentials
                                from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the AWS SDK's chain
  --s3-endpoint <url>           the S3 service, if not AWS S3 (Ceph RGW, Garage, SeaweedFS, R2...)
  --s3-region <name>            its region (default AWS_REGION, else us-east-1)
  --s3-force-path-style         bucket in the URL's path, not its host name (most services but AWS)
  --window-ms <ms>              rate-limit window (default 60000)
  --limit-upload <n>            POST /v2/medias per window (default 10)
  --limit-metadata <n>          GET .../metadata per window (default 120)
  --limit-download <n>          GET .../file per window (default 60)
  --limit-enhance-audio <n>     POST /v1/media/enhance-json per window (default: none)
  --limit-enhance-video <n>     POST /v1/videos per window (default: none)
  --max-upload-bytes <n>        largest accepted file (default 2147483648)
  --max-decoded-bytes <n>       most a compressed file may decode to, as float WAV (default 8589934592)
  --processing-delay-ms <ms>    extra time each media spends PROCESSING (default 0)
  --metadata-wait <s>           longest ?wait= a status request may hold until the state changes
                                (a local-engine extension; default 0: not offered)
  --workers <n>                 processing worker threads (default: cores, at most 4)
  --worker-idle-ms <ms>         a worker thread idle this long ends and gives its memory back
                                (default 60000; 0 keeps them)
  --fetch-timeout-ms <ms>       time limit of the enhance-json fetch (default 60000)
  --allow-private-fetch         let enhance-json fetch from loopback, private and link-local addresses
                                even when --host reaches beyond this machine (on loopback they always are)
  --allow-fetch-from <cidr>     an address or range enhance-json may fetch from even so; repeat for several
  --ffmpeg <path>               ffmpeg program for formats other than WAV (default: ffmpeg on the PATH)
  --ffmpeg-stall-ms <ms>        an ffmpeg or ffprobe run making no progress this long is killed and its
                                media fails (default 120000)
  --max-limiting-db <dB>        most gain reduction the true-peak limiter may apply, 0 or more (default 8);
                                a loudness target that needs more is left unreached, and the media says so
  --keep-hours <h>              finished media go this long after their last use (default 168; 0 keeps them)
  --keep-mib <n>                the oldest finished media go while all take more (default 5120; 0: no limit)
  --keep-grace-min <min>        a media finished or asked for this recently stays whatever the limits
                                say (default 60)
  --sweep-every-min <min>       how often the limits are checked besides after each job (default 10)

Several instances sharing the work (docs/several-machines.md):
  --redis <url>                 redis://[user:password@]host[:port][/db] or rediss://: records, jobs
                                (BullMQ), rate-limit windows and the retention's turn live there, shared
                                by every instance started with the same URL. Their media files are shared
                                too: with --storage each instance has a --data-dir of its own; without it
                                they must share --data-dir (one folder: the same machine, or a network
                                folder mounted on each). The upload limit (10 per window) is then the
                                whole service's: raise --limit-upload for a team's backlog.
                                With a password, prefer the MEDIA_ENHANCE_REDIS environment variable:
                                other users of this machine can read the command line (ps)
  --job-lock-ms <ms>            with --redis: a job whose instance stops renewing its lock this long is
                                taken up by another instance (default 30000)

Server limits (what a client meets when one is reached):
  --max-connections <n>         connections served at once; beyond: 503 + Retry-After (default 1024)
  --max-uploads-per-key <n>     uploads in progress at once per key; beyond: 503 + Retry-After (default 64)
  --max-connections-per-client <n>
                                connections one client address may hold; beyond: 503 + Retry-After
                                and closed (default 1024: behind a proxy, every client has the proxy's address)
  --max-held-waits-per-key <n>  metadata ?wait= requests held at once per key; beyond: answered at once
                                (default 1024)
  --headers-timeout-ms <ms>     time to send a request's headers; then 408, closed (default 30000)
  --idle-timeout-ms <ms>        a connection where nothing moves this long is closed, 408 (default 60000)
  --request-timeout-ms <ms>     time for a whole request, body included; 0: none (default 0: a large
                                upload on a slow line is honest, a stalled one meets the idle timeout)
  --keep-alive-timeout-ms <ms>  idle time between requests on one connection (default 15000)
  --max-header-bytes <n>        largest request head; beyond: 431 (default 16384)
  --max-header-count <n>        most header fields; beyond: 431 (default 100)

Fault injection (tests and benchmarks):
  --fault-500 <p>               probability of a 500 answer
  --fault-503 <p>               probability of a 503 answer
  --fault-reset <p>             probability of a connection reset halfway through a response
  --fault-drip <p>              probability of a slowly dripping response
  --fault-drip-bps <n>          speed of a dripping response (default 16384 bytes/s)
  --fault-429 <n>               answer the next n rate-limited requests 429
  --fault-fail-processing <p>   probability that processing ends FAILED
  --fault-disk-full <p>         probability that storing an upload fails as on a full disk (507)

  --quiet                       no access log
  -h, --help                    this text
`;

const numberOption = { type: 'string' } as const;

/** The S3 flags, checked as the engine checks its options, an error naming the flag. */
function storageOptions(values: {
  storage?: string;
  's3-endpoint'?: string;
  's3-region'?: string;
  's3-force-path-style'?: boolean;
}): Pick<EngineOptions, 'storage' | 's3'> {
  const s3 = {
    ...(values['s3-endpoint'] !== undefined ? { endpoint: values['s3-endpoint'] } : {}),
    ...(values['s3-region'] !== undefined ? { region: values['s3-region'] } : {}),
    ...(values['s3-force-path-style'] ? { forcePathStyle: true } : {}),
  };
  const given = values.storage === undefined && Object.keys(s3).length === 0 ? {} : { storage: values.storage, s3 };
  try {
    resolveStorage(given.storage, given.s3);
  } catch (err) {
    // The option's name as the shell knows it: storage -> --storage, s3.endpoint -> --s3-endpoint.
    const message = (err as Error).message.replace(/^s3\.(\w+)/, (_, name: string) =>
      name === 'forcePathStyle' ? '--s3-force-path-style' : `--s3-${name}`,
    );
    throw new Error(
      message.replace(/^(storage|s3):/, (_, name: string) => (name === 's3' ? '--s3-*:' : '--storage:')),
      { cause: err },
    );
  }
  return given;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: numberOption,
      'data-dir': { type: 'string' },
      storage: { type: 'string' },
      's3-endpoint': { type: 'string' },
      's3-region': { type: 'string' },
      's3-force-path-style': { type: 'boolean' },
      key: { type: 'string', multiple: true },
      'key-file': { type: 'string' },
      'window-ms': numberOption,
      'limit-upload': numberOption,
      'limit-metadata': numberOption,
      'limit-download': numberOption,
      'limit-enhance-audio': numberOption,
      'limit-enhance-video': numberOption,
      'max-upload-bytes': numberOption,
      'max-decoded-bytes': numberOption,
      'processing-delay-ms': numberOption,
      'metadata-wait': numberOption,
      workers: numberOption,
      'worker-idle-ms': numberOption,
      'fetch-timeout-ms': numberOption,
      'allow-private-fetch': { type: 'boolean' },
      'allow-fetch-from': { type: 'string', multiple: true },
      'max-connections': numberOption,
      'max-uploads-per-key': numberOption,
      'max-connections-per-client': numberOption,
      'max-held-waits-per-key': numberOption,
      'headers-timeout-ms': numberOption,
      'idle-timeout-ms': numberOption,
      'request-timeout-ms': numberOption,
      'keep-alive-timeout-ms': numberOption,
      'max-header-bytes': numberOption,
      'max-header-count': numberOption,
      ffmpeg: { type: 'string' },
      'ffmpeg-stall-ms': numberOption,
      'max-limiting-db': numberOption,
      'keep-hours': numberOption,
      'keep-mib': numberOption,
      'keep-grace-min': numberOption,
      'sweep-every-min': numberOption,
      redis: { type: 'string' },
      'job-lock-ms': numberOption,
      'fault-500': numberOption,
      'fault-503': numberOption,
      'fault-reset': numberOption,
      'fault-drip': numberOption,
      'fault-drip-bps': numberOption,
      'fault-429': numberOption,
      'fault-fail-processing': numberOption,
      'fault-disk-full': numberOption,
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  // Each flag is checked by the rule the engine applies to its option, and an error names the flag;
  // all of them before anything is written, so a refused start leaves no trace.
  const num = (name: keyof typeof values, rule: NumberRule): number | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (String(raw).trim() === '' || !rule.test(value))
      throw new Error(`--${name}: ${rule.text} (got "${String(raw)}")`);
    return value;
  };
  const maxLimitingDb = num('max-limiting-db', RULES.nonNegative);
  const limits: EngineOptions['limits'] = {};
  for (const [option, endpoint] of [
    ['limit-upload', 'uploadMedia'],
    ['limit-metadata', 'getMetadata'],
    ['limit-download', 'downloadFile'],
    ['limit-enhance-audio', 'enhanceAudio'],
    ['limit-enhance-video', 'enhanceVideo'],
  ] as const) {
    const value = num(option, RULES.positiveInteger);
    if (value !== undefined) limits[endpoint] = value;
  }
  const redisUrl = values.redis ?? (process.env.MEDIA_ENHANCE_REDIS || undefined);
  const probability = (name: keyof typeof values) => num(name, RULES.probability);
  parseNetworks(values['allow-fetch-from'] ?? [], '--allow-fetch-from');
  const options: Omit<EngineOptions, 'apiKeys' | 'dataDir'> = {
    host: values.host,
    port: num('port', RULES.port) ?? 8600,
    ...storageOptions(values),
    limits,
    windowMs: num('window-ms', RULES.positiveTimeoutMs),
    maxUploadBytes: num('max-upload-bytes', RULES.positiveInteger),
    maxDecodedBytes: num('max-decoded-bytes', RULES.positiveInteger),
    processingDelayMs: num('processing-delay-ms', RULES.timeoutMs),
    metadataWaitS: num('metadata-wait', RULES.nonNegativeInteger),
    workers: num('workers', RULES.positiveInteger),
    workerIdleMs: num('worker-idle-ms', RULES.timeoutMs),
    fetchTimeoutMs: num('fetch-timeout-ms', RULES.positiveTimeoutMs),
    ...(values['allow-private-fetch'] ? { allowPrivateFetch: true } : {}),
    allowFetchFrom: values['allow-fetch-from'],
    ffmpegPath: values.ffmpeg,
    ffmpegStallMs: num('ffmpeg-stall-ms', RULES.positiveTimeoutMs),
    maxLimitingDb,
    ...(redisUrl !== undefined ? { redis: redisUrl } : {}),
    jobLockMs: num('job-lock-ms', RULES.positiveTimeoutMs),
    retention: retentionOptions(
      num('keep-hours', RULES.nonNegative),
      num('keep-mib', RULES.nonNegative),
      num('keep-grace-min', RULES.nonNegative),
      num('sweep-every-min', RULES.positive),
    ),
    server: {
      maxConnections: num('max-connections', RULES.positiveInteger),
      maxUploadsPerKey: num('max-uploads-per-key', RULES.positiveInteger),
      maxConnectionsPerClient: num('max-connections-per-client', RULES.positiveInteger),
      maxHeldWaitsPerKey: num('max-held-waits-per-key', RULES.positiveInteger),
      headersTimeoutMs: num('headers-timeout-ms', RULES.positiveTimeoutMs),
      idleTimeoutMs: num('idle-timeout-ms', RULES.positiveTimeoutMs),
      requestTimeoutMs: num('request-timeout-ms', RULES.timeoutMs),
      keepAliveTimeoutMs: num('keep-alive-timeout-ms', RULES.positiveTimeoutMs),
      maxHeaderBytes: num('max-header-bytes', RULES.positiveInteger),
      maxHeaderCount: num('max-header-count', RULES.positiveInteger),
    },
    onRemoved: ({ record, reason }) =>
      process.stdout.write(`removed media ${record.uid} ("${record.file_name}"): ${reason}\n`),
    faults: {
      error500Rate: probability('fault-500'),
      error503Rate: probability('fault-503'),
      resetRate: probability('fault-reset'),
      dripRate: probability('fault-drip'),
      dripBytesPerSecond: num('fault-drip-bps', RULES.positive),
      forced429: num('fault-429', RULES.nonNegativeInteger),
      failProcessingRate: probability('fault-fail-processing'),
      diskFullRate: probability('fault-disk-full'),
    },
    onLogLine: values.quiet ? undefined : (line) => process.stdout.write(`${line}\n`),
    onErrorLine: (line) => process.stderr.write(`${line}\n`),
  };
  const dataDir = resolve(values['data-dir'] ?? 'media-enhance-data');
  await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { keys, keyNote } = await acceptedKeys(values.key ?? [], values['key-file'], dataDir);
  const engine = await startEngine({ ...options, apiKeys: keys, dataDir });
  process.stdout.write(
    `media enhancement engine listening on ${engine.url} (data in ${dataDir}${redisUrl ? `, shared through ${String(withoutPassword(redisUrl))}` : ''}; accepts ${keyNote})\n`,
  );
  const stop = () => {
    process.stdout.write('stopping...\n');
    engine.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The CLI's hours and MiB, 0 meaning no limit, as the engine's options. */
function retentionOptions(
  hours: number | undefined,
  mebibytes: number | undefined,
  graceMinutes: number | undefined,
  sweepMinutes: number | undefined,
): Partial<RetentionOptions> {
  const retention: Partial<RetentionOptions> = {};
  if (graceMinutes !== undefined) retention.graceMs = graceMinutes * 60_000;
  if (sweepMinutes !== undefined) retention.sweepIntervalMs = Math.max(1, Math.round(sweepMinutes * 60_000));
  if (hours !== undefined) retention.maxAgeMs = hours === 0 ? null : hours * 3600_000;
  if (mebibytes !== undefined) retention.maxTotalBytes = mebibytes === 0 ? null : mebibytes * 1024 ** 2;
  return retention;
}

/** The keys of the environment, a key file and the command line, all accepted; without any, the data folder's own key. */
async function acceptedKeys(
  fromFlags: string[],
  keyFile: string | undefined,
  dataDir: string,
): Promise<{ keys: string[]; keyNote: string }> {
  const fromEnv = (process.env.MEDIA_ENHANCE_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  let fromFile: string[] = [];
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = await fsp.readFile(keyFile, 'utf8');
    } catch (err) {
      throw new Error(
        `--key-file: cannot read "${keyFile}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        { cause: err },
      );
    }
    fromFile = text
      .split(/\r?\n/)
      .map((k) => k.trim())
      .filter(Boolean);
    if (fromFile.length === 0) throw new Error(`--key-file: "${keyFile}" holds no key (one key per line is expected)`);
  }
  const keys = [...fromEnv, ...fromFile, ...fromFlags];
  if (keys.length > 0) {
    const sources = [
      fromEnv.length && 'MEDIA_ENHANCE_KEYS',
      fromFile.length && keyFile,
      fromFlags.length && 'the command line',
    ].filter(Boolean);
    return { keys, keyNote: `${keys.length} key(s) from ${sources.join(', ')}` };
  }
  const file = join(dataDir, 'api-key');
  return { keys: [await readOrMakeKey(file)], keyNote: `the key in ${file}` };
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
