import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestEngine } from '../fixtures/test-engine';

describe('client in a script of its own', function () {
  it('keeps the process alive while it waits between polls, until the media completes', async () => {
    // The engine runs in this process, so nothing but the client's own timers keeps the script alive.
    const engine = await startTestEngine({ processingDelayMs: 1_500 });
    try {
      const script = `
        const { MediaEnhanceClient } = require(${JSON.stringify(join(__dirname, '..', '..', 'src'))});
        const { makeWav } = require(${JSON.stringify(join(__dirname, '..', 'fixtures', 'media'))});
        (async () => {
          const client = new MediaEnhanceClient({ baseUrl: process.argv[1], apiKey: process.argv[2], poll: { initialMs: [400, 500] } });
          const media = await client.uploadMedia({ file: makeWav(0.2, 8000), fileName: 'a.wav' });
          const done = await client.waitForCompletion(media.uid);
          console.log('finished', done.enhancement_status);
          await client.close();
        })();
        process.on('exit', (code) => console.log('exit', code));
      `;
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, engine.url, engine.apiKey]);
      assert.match(stdout, /finished COMPLETED\nexit 0/);
    } finally {
      await engine.dispose();
    }
  });
});
