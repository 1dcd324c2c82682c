// The S3 storage's options (`--storage`, `--s3-*`, and `storage` / `s3` in code or settings.js): a wrong
// one is refused at start naming the option, the value and the rule; nothing is written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, type EngineOptions } from '../../src/engine';
import { resolveEngineOptions } from '../../src/engine/options';
import { parseS3Location } from '../../src/engine/storage/s3-location';

const CLI = join(__dirname, '..', '..', 'src', 'engine', 'cli.js');

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('engine: the S3 storage options', function () {
  it('reads the bucket and the prefix of s3://<bucket>/<prefix>', () => {
    assert.deepEqual(parseS3Location('s3://media'), { bucket: 'media', prefix: '' });
    assert.deepEqual(parseS3Location('s3://media/'), { bucket: 'media', prefix: '' });
    assert.deepEqual(parseS3Location('s3://media.team-1/cluster/a'), { bucket: 'media.team-1', prefix: 'cluster/a/' });
    assert.deepEqual(parseS3Location('s3://media//a//b/'), { bucket: 'media', prefix: 'a/b/' });
  });

  for (const [url, message] of [
    ['/var/media', /^TypeError: storage: must be s3:\/\/<bucket>\/<prefix> .*\(got "\/var\/media"\)$/],
    ['http://host/bucket', /^TypeError: storage: must be s3:\/\/<bucket>\/<prefix> .*\(got "http:\/\/host\/bucket"\)$/],
    [
      's3://Media_Files/x',
      /^TypeError: storage: the bucket must be 3 to 63 lower-case letters.* \(got "Media_Files"\)$/,
    ],
    ['s3:///x', /^TypeError: storage: the bucket must be .* \(got ""\)$/],
    ['s3://media/a/../b', /^TypeError: storage: the prefix may not hold "\." or "\.\." segments \(got "a\/\.\.\/b"\)$/],
  ] as const) {
    it(`refuses storage ${url}, naming the value and the rule`, () => {
      assert.throws(() => parseS3Location(url), message);
    });
  }

  it('takes the region from AWS_REGION unless given, and us-east-1 without either', () => {
    const saved = process.env.AWS_REGION;
    try {
      delete process.env.AWS_REGION;
      const base = { apiKeys: ['k'], dataDir: '/tmp/unused', storage: 's3://media/x' };
      assert.equal(resolveEngineOptions(base).storage?.s3.region, 'us-east-1');
      process.env.AWS_REGION = 'eu-west-3';
      assert.equal(resolveEngineOptions(base).storage?.s3.region, 'eu-west-3');
      assert.equal(resolveEngineOptions({ ...base, s3: { region: 'ap-south-1' } }).storage?.s3.region, 'ap-south-1');
      assert.equal(resolveEngineOptions({ apiKeys: ['k'], dataDir: '/tmp/unused' }).storage, null);
    } finally {
      if (saved === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = saved;
    }
  });

  for (const [options, message] of [
    [{ s3: { endpoint: 'http://127.0.0.1:1' } }, /^TypeError: s3: applies only with storage/],
    [
      { storage: 's3://media', s3: { endpoint: 'ftp://127.0.0.1' } },
      /^TypeError: s3\.endpoint: must be an http:\/\/ or https:\/\/ URL without credentials \(got "ftp:\/\/127\.0\.0\.1"\)$/,
    ],
    [
      { storage: 's3://media', s3: { endpoint: 'http://user:secret@127.0.0.1' } },
      /^TypeError: s3\.endpoint: must be an http:\/\/ or https:\/\/ URL without credentials \(got "http:\/\/127\.0\.0\.1"\)$/,
    ],
    [{ storage: 's3://media', s3: { region: 'EU West' } }, /^TypeError: s3\.region: must be a region name/],
    [
      { storage: 's3://media', s3: { forcePathStyle: 'yes' as unknown as boolean } },
      /^TypeError: s3\.forcePathStyle: must be true or false \(got "yes"\)$/,
    ],
  ] as const) {
    it(`startEngine(${JSON.stringify(options)}) is refused, naming the option, the value and the rule`, async () => {
      const dataDir = join(tmpdir(), `me-s3-options-${process.pid}-never-made`);
      await assert.rejects(startEngine({ apiKeys: ['k'], dataDir, ...(options as Partial<EngineOptions>) }), (err) => {
        assert.match(String(err), message);
        assert.doesNotMatch(String(err), /secret/, 'a credential in the URL is never repeated');
        return true;
      });
      await assert.rejects(fsp.stat(dataDir), 'no data folder made');
    });
  }

  for (const [args, message] of [
    [['--storage', 'media'], /--storage: must be s3:\/\/<bucket>\/<prefix> .*\(got "media"\)/],
    [
      ['--storage', 's3://media', '--s3-endpoint', 'localhost:7480'],
      /--s3-endpoint: must be an http:\/\/ or https:\/\//,
    ],
    [['--s3-force-path-style'], /--s3-\*: applies only with storage/],
  ] as const) {
    it(`media-enhance-engine ${args.join(' ')}: exits 1 naming the flag, and writes nothing`, async () => {
      const dataDir = join(tmpdir(), `me-s3-cli-${process.pid}-never-made`);
      const { code, stdout, stderr } = await runCli([...args, '--data-dir', dataDir, '--port', '0']);
      assert.equal(code, 1);
      assert.match(stderr, message);
      assert.equal(stdout, '');
      await assert.rejects(fsp.stat(dataDir), 'no data folder made');
    });
  }

  it('loads the AWS SDK only for an engine that uses S3', async () => {
    const script = `
      const { startEngine } = require(${JSON.stringify(join(__dirname, '..', '..', 'src', 'engine'))});
      const os = require('node:os'), path = require('node:path'), fs = require('node:fs');
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'me-s3-lazy-'));
      startEngine({ apiKeys: ['k'], dataDir }).then(async (engine) => {
        await engine.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
        console.log(Object.keys(require.cache).filter((name) => name.includes('@aws-sdk')).length);
      });`;
    const loaded = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['-e', script], { timeout: 30_000 }, (err, stdout) =>
        err ? reject(new Error(err.message, { cause: err })) : resolve(stdout.trim()),
      ),
    );
    assert.equal(loaded, '0');
  });
});
