// The engine CLI's table of flags (src/engine/cli-flags.ts): each flag reaches the engine option it names,
// in that option's unit, checked by that option's rule; and each default the help states is the one the
// engine applies: giving a flag its stated default changes nothing the engine resolves.
import assert from 'node:assert/strict';
import { CLI_DEFAULT_PORT, FLAGS } from '../../src/engine/cli-flags';
import { helpText } from '../../src/engine/cli-help';
import { parseFlags } from '../../src/engine/cli-parse';
import { resolveEngineOptions, type ResolvedEngineOptions } from '../../src/engine/options';

/** What the engine would run with, from a command line (the parts a test can compare). */
function resolved(args: string[]): Omit<ResolvedEngineOptions, 'clock' | 'onErrorLine'> {
  const {
    clock: _clock,
    onErrorLine: _onErrorLine,
    ...rest
  } = resolveEngineOptions({
    ...parseFlags(args, {}).options,
    apiKeys: ['k'],
    dataDir: '/nonexistent',
  });
  return rest;
}

describe('engine CLI: one table of flags', function () {
  it('every stated numeric default is the one the engine applies without the flag', () => {
    // (Faults keep their options as given and apply a default when they run: cli-help.test checks those.)
    const stated = FLAGS.filter(
      (flag) => flag.kind === 'number' && typeof flag.default === 'number' && !flag.option?.startsWith('faults.'),
    );
    assert.ok(stated.length >= 25, `${stated.length} flags state a default`);
    const without = resolved([]);
    const differing = stated
      .map((flag) => `--${flag.name}=${String(flag.default)}`)
      .filter((arg) => {
        try {
          assert.deepEqual(resolved([arg]), without);
          return false;
        } catch {
          return true;
        }
      });
    assert.deepEqual(differing, []);
  });

  it('every flag and its stated default is in the help', () => {
    const help = helpText();
    for (const flag of FLAGS) {
      assert.match(help, new RegExp(`\\n {2}(-\\w, )?--${flag.name}\\b`), flag.name);
      if (flag.default !== undefined) assert.ok(help.includes(`default ${String(flag.default)}`), flag.name);
    }
  });

  it("maps each flag to its option in the option's unit", () => {
    const { options } = parseFlags(
      [
        '--keep-hours=0',
        '--keep-mib=2',
        '--keep-grace-min=1.5',
        '--sweep-every-min=0.000001',
        '--limit-upload=5',
        '--max-connections=7',
        '--fault-503=0.25',
        '--allow-fetch-from=10.0.0.0/8',
        '--allow-private-fetch',
        '--ffmpeg=/opt/ffmpeg',
      ],
      {},
    );
    assert.deepEqual(options.retention, {
      maxAgeMs: null,
      maxTotalBytes: 2 * 1024 ** 2,
      graceMs: 90_000,
      sweepIntervalMs: 1,
    });
    assert.deepEqual(options.limits, { uploadMedia: 5 });
    assert.deepEqual(options.server, { maxConnections: 7 });
    assert.deepEqual(options.faults, { error503Rate: 0.25 });
    assert.deepEqual(options.allowFetchFrom, ['10.0.0.0/8']);
    assert.equal(options.allowPrivateFetch, true);
    assert.equal(options.ffmpegPath, '/opt/ffmpeg');
    assert.equal(options.port, CLI_DEFAULT_PORT);
    assert.equal('allowPrivateFetch' in parseFlags([], {}).options, false, 'without the switch the engine decides');
  });

  it('takes the Redis URL from the environment when no flag gives one', () => {
    assert.equal(
      parseFlags([], { MEDIA_ENHANCE_REDIS: 'redis://127.0.0.1:6390' }).options.redis,
      'redis://127.0.0.1:6390',
    );
    assert.equal(
      parseFlags(['--redis=redis://127.0.0.1:6391'], { MEDIA_ENHANCE_REDIS: 'redis://127.0.0.1:6390' }).redis,
      'redis://127.0.0.1:6391',
    );
  });

  it('refuses a value against its rule, naming the flag, the rule and the value', () => {
    assert.throws(
      () => parseFlags(['--job-lock-ms', '0'], {}),
      /^Error: --job-lock-ms: must be a whole number of milliseconds from 1 to 2147483647 \(got "0"\)$/,
    );
    assert.throws(() => parseFlags(['--request-timeout-ms=-1'], {}), /--request-timeout-ms: .* \(got "-1"\)/);
    assert.throws(() => parseFlags(['--allow-fetch-from', 'nowhere'], {}), /--allow-fetch-from/);
    assert.throws(() => parseFlags(['--no-such-flag'], {}), /no-such-flag/);
  });
});
