// The project's own lint rule: an eslint-disable comment says why on its own line, so a reader of the
// code never has to guess why a finding was silenced.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const ROOT = join(__dirname, '..', '..');

describe('lint: a disable comment says why', function () {
  this.timeout(30_000);

  it('reports an eslint-disable without a reason after `--`, and accepts one with it', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const code = [
      '// eslint-disable-next-line no-debugger',
      'debugger;',
      '// eslint-disable-next-line no-debugger -- the form the project asks for',
      'debugger;',
      '',
    ].join('\n');
    const [result] = await eslint.lintText(code, { filePath: join(ROOT, 'probe.mjs') });
    assert.deepEqual(
      result.messages.map((m) => `${m.line} ${m.ruleId}`),
      ['1 project/disable-needs-reason'],
    );
  });
});
