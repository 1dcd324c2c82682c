// Limits no engine can honour (a window of 0 requests, a negative count or size) are refused at start,
// from the shell and from code alike, with the flag or option, the value and the rule.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, type EngineOptions } from '../../src/engine';

const CLI = join(__dirname, '..', '..', 'src', 'engine', 'cli.js');

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('engine: impossible limits are refused at start', function () {
  let dir: string;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(join(tmpdir(), 'me-options-'));
  });
  afterEach(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  for (const [args, message] of [
    [['--limit-upload', '0'], /--limit-upload: must be a whole number of at least 1 \(got "0"\)/],
    [['--limit-metadata=-3'], /--limit-metadata: must be a whole number of at least 1 \(got "-3"\)/],
    [['--max-upload-bytes=-1'], /--max-upload-bytes: must be a whole number of at least 1 \(got "-1"\)/],
    [['--limit-download', '2.5'], /--limit-download: must be a whole number of at least 1 \(got "2.5"\)/],
    [['--port', '70000'], /--port: must be a whole number from 0 to 65535 \(got "70000"\)/],
    [['--max-connections', '0'], /--max-connections: must be a whole number of at least 1 \(got "0"\)/],
    [['--fault-503', '1.5'], /--fault-503: must be a probability from 0 to 1 \(got "1.5"\)/],
    [['--keep-hours=-1'], /--keep-hours: must be a number of at least 0 \(got "-1"\)/],
    [['--window-ms', ''], /--window-ms: must be a whole number of milliseconds from 1 to 2147483647 \(got ""\)/],
  ] as const) {
    it(`media-enhance-engine ${args.join(' ')}: exits 1 naming the flag, the value and the rule, and writes nothing`, async () => {
      const dataDir = join(dir, 'data');
      const { code, stdout, stderr } = await runCli([
        ...args,
        '--data-dir',
        dataDir,
        '--port',
        args[0] === '--port' ? args[1] : '0',
      ]);
      assert.equal(code, 1);
      assert.match(stderr, message);
      assert.equal(stdout, '', 'it never started');
      await assert.rejects(fsp.stat(dataDir), 'no data folder made');
    });
  }

  for (const [options, message] of [
    [
      { limits: { uploadMedia: 0 } },
      /^TypeError: limits\.uploadMedia: must be a whole number of at least 1, or null for no limit \(got 0\)$/,
    ],
    [{ limits: { getMetadata: -3 } }, /^TypeError: limits\.getMetadata: .* \(got -3\)$/],
    [
      { limits: { upload: 5 } as never },
      /^TypeError: limits\.upload: not an operation; permitted: enhanceAudio, enhanceVideo, uploadMedia, getMetadata, downloadFile$/,
    ],
    [{ maxUploadBytes: -1 }, /^TypeError: maxUploadBytes: must be a whole number of at least 1 \(got -1\)$/],
    [{ windowMs: 0 }, /^TypeError: windowMs: .* \(got 0\)$/],
    [{ workers: 0 }, /^TypeError: workers: must be a whole number of at least 1 \(got 0\)$/],
    [
      { workerIdleMs: 1.5 },
      /^TypeError: workerIdleMs: must be a whole number of milliseconds from 0 to 2147483647 \(got 1\.5\)$/,
    ],
    [
      { server: { maxUploadsPerKey: 0 } },
      /^TypeError: server\.maxUploadsPerKey: must be a whole number of at least 1 \(got 0\)$/,
    ],
    [
      { server: { headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 } },
      /^TypeError: server\.requestTimeoutMs: must be 0 \(none\) or at least server\.headersTimeoutMs, 2000 \(got 1000\)$/,
    ],
    [{ faults: { error500Rate: 2 } }, /^TypeError: faults\.error500Rate: must be a probability from 0 to 1 \(got 2\)$/],
    [{ retention: { maxAgeMs: -1 } }, /^TypeError: retention\.maxAgeMs: must be a number above 0 \(got -1\)$/],
  ] as [Partial<EngineOptions>, RegExp][]) {
    it(`startEngine(${JSON.stringify(options)}) rejects naming the option, the value and the rule`, async () => {
      const dataDir = join(dir, 'data');
      await assert.rejects(startEngine({ apiKeys: ['k'], dataDir, ...options }), (err: Error) => {
        assert.match(`${err.name}: ${err.message}`, message);
        return true;
      });
      await assert.rejects(fsp.stat(dataDir), 'no data folder made');
    });
  }
});
