// Where a download to a file lands, against a service over loopback that names its files as it likes:
// never over an existing file unless asked, never over the input, never a hidden name, never through a
// link planted at the temporary file's predictable name; local file errors come out as code FILE.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';

const KEY = 'sk-test-0123456789abcdef';

describe('client: where a download to a file lands', function () {
  this.timeout(20_000);
  let dir: string;
  let server: Server;
  let client: MediaEnhanceClient;
  /** What the service answers for /v2/medias/<uid>/file: the body and the Content-Disposition's name. */
  let served: { body: Buffer; disposition?: string };

  beforeEach(async () => {
    dir = await fsp.mkdtemp(join(tmpdir(), 'me-download-files-'));
    served = { body: Buffer.from('the enhanced file') };
    server = createServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'audio/wav',
        'content-length': served.body.length,
        ...(served.disposition ? { 'content-disposition': served.disposition } : {}),
      });
      res.end(served.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new MediaEnhanceClient({ baseUrl: url, apiKey: KEY, retry: { maxRetries: 0 } });
  });

  afterEach(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const fail = (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('resolved'),
      (e: unknown) => e as MediaEnhanceError,
    );

  it("never takes a leading-dot name from the service: `.bashrc` becomes the media's own name", async () => {
    served.disposition = 'attachment; filename=".bashrc"';
    const file = await client.downloadToFile('m1', dir);
    assert.equal(file.path, join(dir, 'm1_enhanced'));
    served.disposition = "attachment; filename*=UTF-8''..%2F.profile";
    assert.equal((await client.downloadToFile('m1', dir, { step: 'PRE' })).path, join(dir, 'm1'));
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['m1', 'm1_enhanced']);
  });

  it('writes a numbered name by default when the service names the file as one that exists (the input)', async () => {
    const input = join(dir, 'talk.wav');
    await fsp.writeFile(input, 'the input');
    served.disposition = 'attachment; filename="talk.wav"';
    const first = await client.downloadToFile('m1', dir);
    const second = await client.downloadToFile('m1', join(dir, 'talk.wav'));
    assert.equal(first.path, join(dir, 'talk (1).wav'));
    assert.equal(first.fileName, 'talk (1).wav');
    assert.equal(second.path, join(dir, 'talk (2).wav'));
    assert.equal(await fsp.readFile(input, 'utf8'), 'the input');
    assert.equal(await fsp.readFile(first.path, 'utf8'), 'the enhanced file');
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['talk (1).wav', 'talk (2).wav', 'talk.wav']);
  });

  it('with ifExists "error", fails with code FILE naming the file, and leaves it and nothing else', async () => {
    const taken = join(dir, 'talk.wav');
    await fsp.writeFile(taken, 'kept');
    const err = await fail(client.downloadToFile('m1', taken, { ifExists: 'error' }));
    assert.equal(err.code, 'FILE');
    assert.ok(err.message.includes(taken), err.message);
    assert.equal(await fsp.readFile(taken, 'utf8'), 'kept');
    assert.deepEqual(await fsp.readdir(dir), ['talk.wav'], 'no temporary file left');
  });

  it('with ifExists "overwrite", replaces the file, but never one of neverReplace (the input, by another path too)', async () => {
    const taken = join(dir, 'talk.wav');
    await fsp.writeFile(taken, 'old');
    await client.downloadToFile('m1', taken, { ifExists: 'overwrite' });
    assert.equal(await fsp.readFile(taken, 'utf8'), 'the enhanced file');

    const input = join(dir, 'in.wav');
    await fsp.writeFile(input, 'the input');
    await fsp.symlink(input, join(dir, 'input-link.wav'));
    const err = await fail(
      client.downloadToFile('m1', join(dir, 'in.wav'), {
        ifExists: 'overwrite',
        neverReplace: [join(dir, 'input-link.wav')],
      }),
    );
    assert.equal(err.code, 'FILE');
    assert.match(err.message, /is the input file/);
    assert.equal(await fsp.readFile(input, 'utf8'), 'the input');
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['in.wav', 'input-link.wav', 'talk.wav']);
  });

  it('gives two downloads racing for one name two files: the name is created exclusively', async () => {
    const target = join(dir, 'same.wav');
    served.body = Buffer.alloc(300_000, 1);
    const [a, b] = await Promise.all([client.downloadToFile('m1', target), client.downloadToFile('m1', target)]);
    assert.deepEqual([a.path, b.path].sort(), [join(dir, 'same (1).wav'), target]);
    const contents = await Promise.all([a.path, b.path].map((p) => fsp.readFile(p)));
    assert.equal(contents[0].length, 300_000);
    assert.equal(contents[1].length, 300_000);
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['same (1).wav', 'same.wav']);
  });

  it('keeps a numbered name within 255 bytes', async () => {
    const long = `${'é'.repeat(125)}.wav`; // 254 bytes
    await fsp.writeFile(join(dir, long), 'taken');
    const file = await client.downloadToFile('m1', join(dir, long));
    assert.ok(Buffer.byteLength(file.fileName) <= 255, `${Buffer.byteLength(file.fileName)} bytes`);
    assert.match(file.fileName, /^é+ \(1\)\.wav$/);
  });

  describe('a name planted at the resumable part file', () => {
    it('a symlink leaves its target untouched, and the download still succeeds', async () => {
      const victim = join(dir, 'victim.txt');
      await fsp.writeFile(victim, 'precious');
      const out = join(dir, 'out');
      await fsp.mkdir(out);
      const part = join(out, '.m1.ENHANCED.part');
      await fsp.symlink(victim, part);
      const file = await client.downloadToFile('m1', out, { resumable: true });
      assert.equal(await fsp.readFile(victim, 'utf8'), 'precious');
      assert.equal(await fsp.readFile(file.path, 'utf8'), 'the enhanced file');
      assert.equal(file.path, join(out, 'm1_enhanced'));
      assert.ok((await fsp.lstat(part)).isSymbolicLink(), 'the link is left as it was, not renamed into place');
      assert.ok((await fsp.lstat(file.path)).isFile());
    });

    it('a hard link to another file is not written either', async () => {
      const victim = join(dir, 'victim.txt');
      await fsp.writeFile(victim, 'precious');
      await fsp.link(victim, join(dir, '.m1.ENHANCED.target.wav.part'));
      const file = await client.downloadToFile('m1', join(dir, 'target.wav'), { resumable: true });
      assert.equal(await fsp.readFile(victim, 'utf8'), 'precious');
      assert.equal(await fsp.readFile(file.path, 'utf8'), 'the enhanced file');
    });

    it('a FIFO does not hang the download', async function () {
      if (process.platform === 'win32') this.skip();
      execFileSync('mkfifo', [join(dir, '.m1.ENHANCED.target.wav.part')]);
      const file = await client.downloadToFile('m1', join(dir, 'target.wav'), { resumable: true });
      assert.equal(await fsp.readFile(file.path, 'utf8'), 'the enhanced file');
    });
  });

  describe('local file errors have code FILE, not HTTP', () => {
    it('a name longer than the file system takes (ENAMETOOLONG)', async () => {
      const err = await fail(client.downloadToFile('m1', join(dir, `${'é'.repeat(200)}.wav`)));
      assert.equal(err.code, 'FILE');
      assert.match(err.message, /ENAMETOOLONG/);
      assert.deepEqual(await fsp.readdir(dir), [], 'no temporary file left');
    });

    it('a folder that does not exist (ENOENT)', async () => {
      const err = await fail(client.downloadToFile('m1', join(dir, 'missing', 'x.wav')));
      assert.equal(err.code, 'FILE');
      assert.match(err.message, /ENOENT/);
    });

    it('a folder that is a file (ENOTDIR)', async () => {
      await fsp.writeFile(join(dir, 'plain'), 'x');
      const err = await fail(client.downloadToFile('m1', join(dir, 'plain', 'x.wav')));
      assert.equal(err.code, 'FILE');
      assert.match(err.message, /ENOTDIR/);
    });
  });
});
