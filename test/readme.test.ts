import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeWav } from './fixtures/media';

const ROOT = join(__dirname, '..', '..');

describe('README', function () {
  it('its client example runs as written and writes the enhanced file', async () => {
    const readme = await fsp.readFile(join(ROOT, 'README.md'), 'utf8');
    const example = /```js\n(\/\/ try\.js[\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example, 'the README has the try.js example');
    const dir = await fsp.mkdtemp(join(tmpdir(), 'me-readme-'));
    try {
      // As installed, the package name resolves to this checkout's build.
      const script = example.replace(
        "require('@media-enhance/node-red-media-enhance')",
        `require(${JSON.stringify(join(ROOT, 'dist', 'src'))})`,
      );
      await fsp.writeFile(join(dir, 'try.js'), script);
      await fsp.writeFile(join(dir, 'episode.wav'), makeWav(1, 44_100));
      const { stdout } = await promisify(execFile)(process.execPath, ['try.js', 'episode.wav'], { cwd: dir });
      assert.match(stdout, /uploading 100%/);
      assert.match(stdout, /COMPLETED/);
      const written = await fsp.stat(join(dir, 'out', 'episode_enhanced.wav'));
      assert.ok(written.size > 44);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});
