// `npm run test:busy`: the README's whole test command (`npm test`) while a CPU hog keeps every core busy,
// as CI machines sometimes are: the check that the suite holds when the machine is not quiet. Not part
// of `npm test` itself. EDITOR_LOAD_NICE sets the hog's nice value (19, the lowest priority, unless told).
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { startCpuHog } from './cpu-hog';

function main(): number {
  const nice = process.env.EDITOR_LOAD_NICE;
  const hog = startCpuHog(nice === undefined ? undefined : Number(nice));
  console.log(`CPU hog: ${hog.pids.length} spinning processes at nice ${hog.priority} (pids ${hog.pids.join(', ')})`);
  const started = Date.now();
  try {
    // The hog's code is loaded; `npm test` may rebuild dist/ under it.
    const { status, error } = spawnSync('npm', ['test'], {
      cwd: resolve(__dirname, '..', '..', '..'),
      stdio: 'inherit',
    });
    if (error) console.error(`npm test did not start: ${error.message}`);
    console.log(
      `\nnpm test under load: ${status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    return status === 0 ? 0 : 1;
  } finally {
    hog.stop();
  }
}

process.exitCode = main();
