// An engine on a machine other people use: its media readable by its own account only, and its key
// kept out of the process list.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeWav } from '../fixtures/media';
import { call, KEY, settled, startTestEngine, upload } from './helpers';

const CLI = join(__dirname, '..', '..', 'src', 'engine', 'cli.js');
const modeOf = async (path: string) => ((await fsp.stat(path)).mode & 0o777).toString(8);

describe('engine: on a shared machine', function () {
  it('keeps its folders 700 and every file it writes 600, and closes a media folder an older version left open', async () => {
    const engine = await startTestEngine();
    try {
      const { json } = await upload(engine, makeWav(0.2, 8_000), 'private.wav');
      await settled(engine, json.uid);
      const root = join(engine.dataDir, 'media');
      const folder = join(root, json.uid);
      assert.deepEqual(
        { root: await modeOf(root), incoming: await modeOf(join(root, '.incoming')), folder: await modeOf(folder) },
        { root: '700', incoming: '700', folder: '700' },
      );
      for (const file of await fsp.readdir(folder)) assert.equal(await modeOf(join(folder, file)), '600', file);
      assert.deepEqual((await fsp.readdir(folder)).sort(), ['input', 'loudness.json', 'meta.json', 'output']);
      await engine.close();
      await fsp.chmod(root, 0o755);
      const again = await startTestEngine({}, engine.dataDir);
      assert.equal(await modeOf(root), '700');
      await again.dispose();
    } finally {
      await engine.dispose();
    }
  });

  it('the CLI takes its keys from a file, so they never show in the process list, and its help says to', async () => {
    const dir = await fsp.mkdtemp(join(tmpdir(), 'me-keyfile-'));
    const key = 'key-from-a-file-0123456789';
    await fsp.writeFile(join(dir, 'keys'), `${key}\n`, { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [CLI, '--port', '0', '--data-dir', join(dir, 'data'), '--key-file', join(dir, 'keys'), '--quiet'],
      { env: { ...process.env, MEDIA_ENHANCE_KEYS: '' } },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          const found = /listening on (http:\/\/\S+)/.exec(out);
          if (found) resolve(found[1]);
        });
        child.once('exit', (code) => reject(new Error(`the engine exited (${code}): ${out}`)));
      });
      assert.equal(
        (await call(`${url}/v2/medias/x/metadata`, { headers: { 'x-api-key': key } })).status,
        404,
        'the key from the file is accepted',
      );
      assert.equal((await call(`${url}/v2/medias/x/metadata`, { headers: { 'x-api-key': KEY } })).status, 401);
      const commandLine = (await fsp.readFile(`/proc/${child.pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
      assert.ok(!commandLine.includes(key), 'ps shows the file, not the key');
      assert.equal(await modeOf(join(dir, 'data')), '700');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await fsp.rm(dir, { recursive: true, force: true });
    }
    const { stdout: help } = await promisify(execFile)(process.execPath, [CLI, '--help']);
    const keys = help.slice(help.indexOf('Keys'));
    assert.ok(
      keys.indexOf('MEDIA_ENHANCE_KEYS') < keys.indexOf('--key-file') &&
        keys.indexOf('--key-file') < keys.indexOf('--key <key>'),
      'the environment and the key file come first',
    );
    assert.match(help, /process list \(ps\)/);
  });
});
