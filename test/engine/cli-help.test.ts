// `media-enhance-engine --help` states the defaults the code applies: each flag's "(default …)" is read
// from the help text and held against the constant the engine uses, so neither can change alone.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_STALL_MS } from '../../src/audio/child-runs';
import { DEFAULT_MAX_LIMITING_DB } from '../../src/audio/normalize';
import { DEFAULT_RATE_LIMITS, DEFAULT_WINDOW_MS } from '../../src/contract/endpoints';
import { DEFAULT_DRIP_BYTES_PER_SECOND } from '../../src/engine/faults';
import { DEFAULT_SERVER_LIMITS } from '../../src/engine/http/server-limits';
import {
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_JOB_LOCK_MS,
  DEFAULT_MAX_UPLOAD_BYTES,
  DEFAULT_PROCESSING_DELAY_MS,
  DEFAULT_WORKER_IDLE_MS,
} from '../../src/engine/options';
import { DEFAULT_MAX_DECODED_BYTES } from '../../src/engine/processors/decode-limits';
import { DEFAULT_RETENTION } from '../../src/engine/storage/retention';

const CLI = join(__dirname, '..', '..', 'src', 'engine', 'cli.js');

/** The code's default of each flag, in the unit the help states it in. */
const CODE_DEFAULTS: Record<string, number | string> = {
  '--window-ms': DEFAULT_WINDOW_MS,
  '--limit-upload': DEFAULT_RATE_LIMITS.uploadMedia!,
  '--limit-metadata': DEFAULT_RATE_LIMITS.getMetadata!,
  '--limit-download': DEFAULT_RATE_LIMITS.downloadFile!,
  '--ffmpeg-stall-ms': DEFAULT_STALL_MS,
  '--max-limiting-db': DEFAULT_MAX_LIMITING_DB,
  '--keep-hours': DEFAULT_RETENTION.maxAgeMs! / 3600_000,
  '--keep-mib': DEFAULT_RETENTION.maxTotalBytes! / 1024 ** 2,
  '--keep-grace-min': DEFAULT_RETENTION.graceMs / 60_000,
  '--sweep-every-min': DEFAULT_RETENTION.sweepIntervalMs / 60_000,
  '--max-connections': DEFAULT_SERVER_LIMITS.maxConnections,
  '--max-uploads-per-key': DEFAULT_SERVER_LIMITS.maxUploadsPerKey,
  '--headers-timeout-ms': DEFAULT_SERVER_LIMITS.headersTimeoutMs,
  '--idle-timeout-ms': DEFAULT_SERVER_LIMITS.idleTimeoutMs,
  '--request-timeout-ms': DEFAULT_SERVER_LIMITS.requestTimeoutMs,
  '--keep-alive-timeout-ms': DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs,
  '--max-header-bytes': DEFAULT_SERVER_LIMITS.maxHeaderBytes,
  '--max-header-count': DEFAULT_SERVER_LIMITS.maxHeaderCount,
  '--max-connections-per-client': DEFAULT_SERVER_LIMITS.maxConnectionsPerClient,
  '--max-held-waits-per-key': DEFAULT_SERVER_LIMITS.maxHeldWaitsPerKey,
  '--max-upload-bytes': DEFAULT_MAX_UPLOAD_BYTES,
  '--max-decoded-bytes': DEFAULT_MAX_DECODED_BYTES,
  '--processing-delay-ms': DEFAULT_PROCESSING_DELAY_MS,
  '--worker-idle-ms': DEFAULT_WORKER_IDLE_MS,
  '--fetch-timeout-ms': DEFAULT_FETCH_TIMEOUT_MS,
  '--job-lock-ms': DEFAULT_JOB_LOCK_MS,
  '--fault-drip-bps': DEFAULT_DRIP_BYTES_PER_SECOND,
};

/** Each flag's stated default: the number after "default" in its help entry (which may run over lines). */
function statedDefaults(help: string): Map<string, string> {
  const stated = new Map<string, string>();
  const entries = help.split(/\n(?=\s{2}-)/);
  for (const entry of entries) {
    const flag = /^\s*(--[\w-]+)/.exec(entry)?.[1];
    const value = /\(default:? (-?\d+(?:\.\d+)?)\b/.exec(entry.replace(/\s+/g, ' '))?.[1];
    if (flag && value !== undefined) stated.set(flag, value);
  }
  return stated;
}

describe('engine CLI: --help states the code defaults', function () {
  it("gives each flag's default as the engine applies it", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, '--help']);
    const stated = statedDefaults(stdout);
    const wrong = Object.entries(CODE_DEFAULTS)
      .filter(([flag, value]) => stated.get(flag) !== String(value))
      .map(([flag, value]) => `${flag}: help says ${stated.get(flag) ?? 'nothing'}, the code ${value}`);
    assert.deepEqual(wrong, []);
  });

  it('reads a default from an entry that runs over two lines (the check itself)', () => {
    const stated = statedDefaults('  --a <n>   one\n              two (default 7)\n  --b <n>   x (default: 3)\n');
    assert.deepEqual(
      [...stated],
      [
        ['--a', '7'],
        ['--b', '3'],
      ],
    );
  });
});
