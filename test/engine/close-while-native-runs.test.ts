// Closing the engine while the default model runs on the native runtime (onnxruntime-node) must leave
// the process running: a worker thread terminated with a native run in flight aborted the whole process
// ("terminate called after throwing an instance of 'Napi::Error'"), Node-RED with it. Run in a process
// of its own, so that an abort fails this test instead of the test run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { nativeRuntime } from '../../src/enhance/onnx-runtimes';

const SCRIPT = join(__dirname, 'close-while-native-runs-child.js');

describe('engine: closing while DeepFilterNet3 runs on the native runtime', function () {
  this.timeout(240_000);

  before(function () {
    const { available, reason } = nativeRuntime();
    if (!available) {
      console.log(`      skipped: ${reason}`);
      this.skip();
    }
  });

  it('ends its threads without aborting the process, at several points of the work', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = execFile(process.execPath, [SCRIPT], { timeout: 200_000 }, (_err, stdout, stderr) =>
          resolve({ code: child.exitCode, stdout, stderr }),
        );
      },
    );
    assert.equal(code, 0, `the process ended with ${code}: ${stderr.slice(-500)}`);
    const closes = stdout.split('\n').filter((line) => line.startsWith('closed while PROCESSING'));
    assert.ok(closes.length >= 3, `closed mid-work only ${closes.length} times:\n${stdout}`);
    assert.match(stdout, /^native$/m, 'the network ran on the native runtime');
  });
});
