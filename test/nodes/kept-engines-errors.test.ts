// The kept engines' error paths: an old engine that fails to close does not stop the new one starting,
// and its failure is reported, not left as an unhandled rejection.
import assert from 'node:assert/strict';
import { enginesStopped, useEngine } from '../../src/nodes/kept-engines';
import type { LocalEngine } from '../../src/nodes/local-engine';

function engineWhoseCloseFails(url: string): LocalEngine {
  return { url, close: () => Promise.reject(new Error('port busy')) } as unknown as LocalEngine;
}

describe('nodes: kept engines when an engine fails to close', () => {
  it('a changed engine setting starts the new engine even though the old one failed to close', async () => {
    const failures: Error[] = [];
    const old = useEngine(
      'errors-1',
      'a',
      () => Promise.resolve(engineWhoseCloseFails('old')),
      (e) => failures.push(e),
    );
    await old.engine;
    await old.release(false); // kept for the deploy
    const next = useEngine(
      'errors-1',
      'b',
      () => Promise.resolve(engineWhoseCloseFails('new')),
      (e) => failures.push(e),
    );
    assert.equal((await next.engine).url, 'new');
    await assert.rejects(next.release(true), /port busy/, 'a deleted config node hears why its engine did not stop');
    await enginesStopped();
  });
});
