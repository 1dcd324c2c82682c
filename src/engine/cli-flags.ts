// The engine CLI's flags, one row each: the flag, the engine option it sets, the rule its value follows,
// its help line and its default as the code applies it. `--help` (cli-help.ts) and the parser
// (cli-parse.ts) are both made from this table, so a flag is declared once and its stated default cannot
// drift from the code's.
import { DEFAULT_STALL_MS } from '../audio/child-runs';
import { DEFAULT_MAX_LIMITING_DB } from '../audio/normalize';
import { DEFAULT_RATE_LIMITS, DEFAULT_WINDOW_MS, type EndpointId } from '../contract/endpoints';
import { DEFAULT_DRIP_BYTES_PER_SECOND, type FaultOptions } from './faults';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './http/server-limits';
import {
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_JOB_LOCK_MS,
  DEFAULT_MAX_UPLOAD_BYTES,
  DEFAULT_METADATA_WAIT_S,
  DEFAULT_PROCESSING_DELAY_MS,
  DEFAULT_WORKER_IDLE_MS,
  RULES,
  type EngineOptions,
  type NumberRule,
} from './options';
import { DEFAULT_MAX_DECODED_BYTES } from './processors/decode-limits';
import { DEFAULT_RETENTION, type RetentionOptions } from './storage/retention';

/** The CLI's own defaults, where it differs from the engine's (a fixed port is easier to point a flow at). */
export const CLI_DEFAULT_PORT = 8600;
export const CLI_DEFAULT_DATA_DIR = './media-enhance-data';

const HOUR_MS = 3600_000;
const MINUTE_MS = 60_000;
const MIB = 1024 ** 2;

/** The engine options, as the CLI builds them: the groups always present, as the code before it had them. */
export type CliEngineOptions = Omit<EngineOptions, 'apiKeys' | 'dataDir'> &
  Required<Pick<EngineOptions, 'limits' | 'server' | 'faults' | 'retention'>>;

/** Where a flag's value goes: a top-level engine option, or one inside a group. */
type TopLevelOption = Exclude<
  {
    [K in keyof EngineOptions]-?: EngineOptions[K] extends number | string | boolean | string[] | undefined ? K : never;
  }[keyof EngineOptions],
  'apiKeys' | 'dataDir'
>;
export type OptionPath =
  | TopLevelOption
  | `limits.${EndpointId}`
  | `server.${keyof ServerLimits}`
  | `faults.${Exclude<keyof FaultOptions, 'random'>}`
  | `retention.${keyof RetentionOptions}`;

export interface Flag {
  /** The flag without its dashes. */
  name: string;
  short?: string;
  /** The value's placeholder in the help, e.g. `<ms>`; none for a switch. */
  arg?: string;
  /** number: checked by `rule`; strings: may be repeated; switch: no value. */
  kind: 'number' | 'string' | 'strings' | 'switch';
  rule?: NumberRule;
  /** The engine option it sets; none when the CLI reads it itself (keys, data folder, storage, Redis). */
  option?: OptionPath;
  /** From the flag's unit to the option's (hours to ms; 0 meaning "no limit" to null). */
  toOption?: (value: number) => number | null;
  /** The code's default in the flag's unit; the help's `{default}` shows it. */
  default?: number | string;
  /** The help entry; `\n` starts a line in the help column. */
  help: string;
}

export interface FlagSection {
  title?: string;
  /** Help rows before the flags, as a flag's (an environment variable). */
  before?: Array<{ label: string; help: string }>;
  /** Lines after the flags (a closing note). */
  after?: string[];
  flags: Flag[];
}

const numberFlag = (
  name: string,
  arg: string,
  rule: NumberRule,
  option: OptionPath | undefined,
  help: string,
  more: Partial<Flag> = {},
): Flag => ({ name, arg, kind: 'number', rule, option, help, ...more });

export const FLAG_SECTIONS: FlagSection[] = [
  {
    title: 'Keys (all those given are accepted):',
    before: [{ label: 'MEDIA_ENHANCE_KEYS', help: 'environment variable: accepted API keys, comma-separated' }],
    flags: [
      {
        name: 'key-file',
        arg: '<path>',
        kind: 'string',
        help: 'a file holding the accepted keys, one per line (keep it mode 600)',
      },
      {
        name: 'key',
        arg: '<key>',
        kind: 'strings',
        help: 'an accepted key; repeat for several. Other users of this machine can\nread it in the process list (ps): prefer the two above',
      },
    ],
    after: ['  Without any, a key is made and kept in <data-dir>/api-key (never printed).'],
  },
  {
    title: 'Options:',
    flags: [
      {
        name: 'host',
        arg: '<address>',
        kind: 'string',
        option: 'host',
        default: DEFAULT_HOST,
        help: 'interface to listen on (default {default}, this machine only)',
      },
      numberFlag('port', '<n>', RULES.port, 'port', 'port, 0 for any free one (default {default})', {
        default: CLI_DEFAULT_PORT,
      }),
      {
        name: 'data-dir',
        arg: '<folder>',
        kind: 'string',
        default: CLI_DEFAULT_DATA_DIR,
        help: 'where media are kept, readable by this account only; a restart resumes\nthem (default {default})',
      },
      {
        name: 'storage',
        arg: 's3://<bucket>/<prefix>',
        kind: 'string',
        help: "keep media files in this S3 bucket (made when missing) instead of\n--data-dir, which then holds records and work files only; credentials\nfrom AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the AWS SDK's chain",
      },
      {
        name: 's3-endpoint',
        arg: '<url>',
        kind: 'string',
        help: 'the S3 service, if not AWS S3 (Ceph RGW, Garage, SeaweedFS, R2...)',
      },
      { name: 's3-region', arg: '<name>', kind: 'string', help: 'its region (default AWS_REGION, else us-east-1)' },
      {
        name: 's3-force-path-style',
        kind: 'switch',
        help: "bucket in the URL's path, not its host name (most services but AWS)",
      },
      numberFlag('window-ms', '<ms>', RULES.positiveTimeoutMs, 'windowMs', 'rate-limit window (default {default})', {
        default: DEFAULT_WINDOW_MS,
      }),
      rateLimitFlag('limit-upload', 'uploadMedia', 'POST /v2/medias per window'),
      rateLimitFlag('limit-metadata', 'getMetadata', 'GET .../metadata per window'),
      rateLimitFlag('limit-download', 'downloadFile', 'GET .../file per window'),
      rateLimitFlag('limit-enhance-audio', 'enhanceAudio', 'POST /v1/media/enhance-json per window'),
      rateLimitFlag('limit-enhance-video', 'enhanceVideo', 'POST /v1/videos per window'),
      numberFlag(
        'max-upload-bytes',
        '<n>',
        RULES.positiveInteger,
        'maxUploadBytes',
        'largest accepted file (default {default})',
        { default: DEFAULT_MAX_UPLOAD_BYTES },
      ),
      numberFlag(
        'max-decoded-bytes',
        '<n>',
        RULES.positiveInteger,
        'maxDecodedBytes',
        'most a compressed file may decode to, as float WAV (default {default})',
        { default: DEFAULT_MAX_DECODED_BYTES },
      ),
      numberFlag(
        'processing-delay-ms',
        '<ms>',
        RULES.timeoutMs,
        'processingDelayMs',
        'extra time each media spends PROCESSING (default {default})',
        { default: DEFAULT_PROCESSING_DELAY_MS },
      ),
      numberFlag(
        'metadata-wait',
        '<s>',
        RULES.nonNegativeInteger,
        'metadataWaitS',
        'longest ?wait= a status request may hold until the state changes\n(a local-engine extension; default {default}: not offered)',
        { default: DEFAULT_METADATA_WAIT_S },
      ),
      numberFlag(
        'workers',
        '<n>',
        RULES.positiveInteger,
        'workers',
        'processing worker threads (default: cores, at most 4)',
      ),
      numberFlag(
        'worker-idle-ms',
        '<ms>',
        RULES.timeoutMs,
        'workerIdleMs',
        'a worker thread idle this long ends and gives its memory back\n(default {default}; 0 keeps them)',
        { default: DEFAULT_WORKER_IDLE_MS },
      ),
      numberFlag(
        'fetch-timeout-ms',
        '<ms>',
        RULES.positiveTimeoutMs,
        'fetchTimeoutMs',
        'time limit of the enhance-json fetch (default {default})',
        { default: DEFAULT_FETCH_TIMEOUT_MS },
      ),
      {
        name: 'allow-private-fetch',
        kind: 'switch',
        option: 'allowPrivateFetch',
        help: 'let enhance-json fetch from loopback, private and link-local addresses\neven when --host reaches beyond this machine (on loopback they always are)',
      },
      {
        name: 'allow-fetch-from',
        arg: '<cidr>',
        kind: 'strings',
        option: 'allowFetchFrom',
        help: 'an address or range enhance-json may fetch from even so; repeat for several',
      },
      {
        name: 'ffmpeg',
        arg: '<path>',
        kind: 'string',
        option: 'ffmpegPath',
        help: 'ffmpeg program for formats other than WAV (default: ffmpeg on the PATH)',
      },
      numberFlag(
        'ffmpeg-stall-ms',
        '<ms>',
        RULES.positiveTimeoutMs,
        'ffmpegStallMs',
        'an ffmpeg or ffprobe run making no progress this long is killed and its\nmedia fails (default {default})',
        { default: DEFAULT_STALL_MS },
      ),
      numberFlag(
        'max-limiting-db',
        '<dB>',
        RULES.nonNegative,
        'maxLimitingDb',
        'most gain reduction the true-peak limiter may apply, 0 or more (default {default});\na loudness target that needs more is left unreached, and the media says so',
        { default: DEFAULT_MAX_LIMITING_DB },
      ),
      numberFlag(
        'keep-hours',
        '<h>',
        RULES.nonNegative,
        'retention.maxAgeMs',
        'finished media go this long after their last use (default {default}; 0 keeps them)',
        { default: (DEFAULT_RETENTION.maxAgeMs ?? 0) / HOUR_MS, toOption: (h) => (h === 0 ? null : h * HOUR_MS) },
      ),
      numberFlag(
        'keep-mib',
        '<n>',
        RULES.nonNegative,
        'retention.maxTotalBytes',
        'the oldest finished media go while all take more (default {default}; 0: no limit)',
        { default: (DEFAULT_RETENTION.maxTotalBytes ?? 0) / MIB, toOption: (n) => (n === 0 ? null : n * MIB) },
      ),
      numberFlag(
        'keep-grace-min',
        '<min>',
        RULES.nonNegative,
        'retention.graceMs',
        'a media finished or asked for this recently stays whatever the limits\nsay (default {default})',
        { default: DEFAULT_RETENTION.graceMs / MINUTE_MS, toOption: (m) => m * MINUTE_MS },
      ),
      numberFlag(
        'sweep-every-min',
        '<min>',
        RULES.positive,
        'retention.sweepIntervalMs',
        'how often the limits are checked besides after each job (default {default})',
        {
          default: DEFAULT_RETENTION.sweepIntervalMs / MINUTE_MS,
          // A timer needs a whole number of ms, at least 1.
          toOption: (m) => Math.max(1, Math.round(m * MINUTE_MS)),
        },
      ),
    ],
  },
  {
    title: 'Several instances sharing the work (docs/several-machines.md):',
    flags: [
      {
        name: 'redis',
        arg: '<url>',
        kind: 'string',
        help: [
          'redis://[user:password@]host[:port][/db] or rediss://: records, jobs',
          "(BullMQ), rate-limit windows and the retention's turn live there, shared",
          'by every instance started with the same URL. Their media files are shared',
          'too: with --storage each instance has a --data-dir of its own; without it',
          'they must share --data-dir (one folder: the same machine, or a network',
          'folder mounted on each). The upload limit (' +
            String(DEFAULT_RATE_LIMITS.uploadMedia) +
            ' per window) is then the',
          "whole service's: raise --limit-upload for a team's backlog.",
          'With a password, prefer the MEDIA_ENHANCE_REDIS environment variable:',
          'other users of this machine can read the command line (ps)',
        ].join('\n'),
      },
      numberFlag(
        'job-lock-ms',
        '<ms>',
        RULES.positiveTimeoutMs,
        'jobLockMs',
        'with --redis: a job whose instance stops renewing its lock this long is\ntaken up by another instance (default {default})',
        { default: DEFAULT_JOB_LOCK_MS },
      ),
    ],
  },
  {
    title: 'Server limits (what a client meets when one is reached):',
    flags: [
      serverFlag(
        'max-connections',
        '<n>',
        'maxConnections',
        'connections served at once; beyond: 503 + Retry-After (default {default})',
      ),
      serverFlag(
        'max-uploads-per-key',
        '<n>',
        'maxUploadsPerKey',
        'uploads in progress at once per key; beyond: 503 + Retry-After (default {default})',
      ),
      serverFlag(
        'max-connections-per-client',
        '<n>',
        'maxConnectionsPerClient',
        "connections one client address may hold; beyond: 503 + Retry-After\nand closed (default {default}: behind a proxy, every client has the proxy's address)",
      ),
      serverFlag(
        'max-held-waits-per-key',
        '<n>',
        'maxHeldWaitsPerKey',
        'metadata ?wait= requests held at once per key; beyond: answered at once\n(default {default})',
      ),
      serverFlag(
        'headers-timeout-ms',
        '<ms>',
        'headersTimeoutMs',
        "time to send a request's headers; then 408, closed (default {default})",
      ),
      serverFlag(
        'idle-timeout-ms',
        '<ms>',
        'idleTimeoutMs',
        'a connection where nothing moves this long is closed, 408 (default {default})',
      ),
      serverFlag(
        'request-timeout-ms',
        '<ms>',
        'requestTimeoutMs',
        'time for a whole request, body included; 0: none (default {default}: a large\nupload on a slow line is honest, a stalled one meets the idle timeout)',
      ),
      serverFlag(
        'keep-alive-timeout-ms',
        '<ms>',
        'keepAliveTimeoutMs',
        'idle time between requests on one connection (default {default})',
      ),
      serverFlag('max-header-bytes', '<n>', 'maxHeaderBytes', 'largest request head; beyond: 431 (default {default})'),
      serverFlag('max-header-count', '<n>', 'maxHeaderCount', 'most header fields; beyond: 431 (default {default})'),
    ],
  },
  {
    title: 'Fault injection (tests and benchmarks):',
    flags: [
      faultFlag('fault-500', 'error500Rate', 'probability of a 500 answer'),
      faultFlag('fault-503', 'error503Rate', 'probability of a 503 answer'),
      faultFlag('fault-reset', 'resetRate', 'probability of a connection reset halfway through a response'),
      faultFlag('fault-drip', 'dripRate', 'probability of a slowly dripping response'),
      numberFlag(
        'fault-drip-bps',
        '<n>',
        RULES.positive,
        'faults.dripBytesPerSecond',
        'speed of a dripping response (default {default} bytes/s)',
        { default: DEFAULT_DRIP_BYTES_PER_SECOND },
      ),
      numberFlag(
        'fault-429',
        '<n>',
        RULES.nonNegativeInteger,
        'faults.forced429',
        'answer the next n rate-limited requests 429',
      ),
      faultFlag('fault-fail-processing', 'failProcessingRate', 'probability that processing ends FAILED'),
      faultFlag('fault-disk-full', 'diskFullRate', 'probability that storing an upload fails as on a full disk (507)'),
    ],
  },
  {
    flags: [
      { name: 'quiet', kind: 'switch', help: 'no access log' },
      { name: 'help', short: 'h', kind: 'switch', help: 'this text' },
    ],
  },
];

function rateLimitFlag(name: string, endpoint: EndpointId, what: string): Flag {
  const limit = DEFAULT_RATE_LIMITS[endpoint];
  return limit === null
    ? numberFlag(name, '<n>', RULES.positiveInteger, `limits.${endpoint}`, `${what} (default: none)`)
    : numberFlag(name, '<n>', RULES.positiveInteger, `limits.${endpoint}`, `${what} (default {default})`, {
        default: limit,
      });
}

/** A server limit: its rule is the one the engine applies to it (options.ts, resolveServerLimits). */
function serverFlag(name: string, arg: string, limit: keyof ServerLimits, help: string): Flag {
  const rule =
    limit === 'requestTimeoutMs'
      ? RULES.timeoutMs
      : limit.endsWith('Ms')
        ? RULES.positiveTimeoutMs
        : RULES.positiveInteger;
  return numberFlag(name, arg, rule, `server.${limit}`, help, { default: DEFAULT_SERVER_LIMITS[limit] });
}

function faultFlag(name: string, fault: Exclude<keyof FaultOptions, 'random'>, help: string): Flag {
  return numberFlag(name, '<p>', RULES.probability, `faults.${fault}`, help);
}

export const FLAGS: Flag[] = FLAG_SECTIONS.flatMap((section) => section.flags);
