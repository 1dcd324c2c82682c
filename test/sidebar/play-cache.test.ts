// The player's files: fetched once however many Range requests ask at once, the least recently played
// going first beyond the kept number, a failed fetch tried again, and cleared with the media.
import assert from 'node:assert/strict';
import { existsSync, promises as fsp } from 'node:fs';
import { PlayCache } from '../../src/sidebar/play-cache';

/** Resolves once `path` is gone (a forgotten file is removed in the background); fails after 5 s. */
async function gone(path: string): Promise<void> {
  for (const deadline = Date.now() + 5_000; existsSync(path);) {
    assert.ok(Date.now() < deadline, `${path} is still there`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('sidebar: the files the player plays', () => {
  it('fetches a file once for many requests, keeps the most recently played, retries a failure, and clears', async () => {
    const cache = new PlayCache(2);
    const fetched: string[] = [];
    const fetchAs = (name: string) => async (path: string) => {
      fetched.push(name);
      await fsp.writeFile(path, name);
      return { contentType: 'audio/wav' };
    };
    const [a1, a2] = await Promise.all([cache.file('a', fetchAs('a')), cache.file('a', fetchAs('a'))]);
    assert.equal(a1, a2);
    assert.deepEqual(fetched, ['a'], 'one fetch for two requests at once');
    assert.equal(await fsp.readFile(a1.path, 'utf8'), 'a');
    const b = await cache.file('b', fetchAs('b'));
    await cache.file('a', fetchAs('a')); // a played again: b is now the least recent
    await cache.file('c', fetchAs('c'));
    await gone(b.path); // b went, its file removed
    assert.equal(existsSync(a1.path), true, 'a stays');
    assert.deepEqual(fetched, ['a', 'b', 'c']);

    await assert.rejects(
      cache.file('d', () => Promise.reject(new Error('service away'))),
      /service away/,
    );
    const d = await cache.file('d', fetchAs('d'));
    assert.equal(await fsp.readFile(d.path, 'utf8'), 'd', 'tried again after the failure');

    cache.clear();
    await gone(d.path);
    await gone(a1.path); // every file goes
    await cache.file('a', fetchAs('a'));
    assert.deepEqual(fetched, ['a', 'b', 'c', 'd', 'a'], 'fetched again after the clear');
  });
});

describe('sidebar: the player keeps files up to a total size', () => {
  it('forgets the least recently played files beyond the bytes kept, and keeps the newest however large', async () => {
    const cache = new PlayCache(6, 10);
    const fetchBytes = (size: number) => async (path: string) => {
      await fsp.writeFile(path, Buffer.alloc(size));
      return { contentType: 'audio/wav' };
    };
    const a = await cache.file('a', fetchBytes(4));
    const b = await cache.file('b', fetchBytes(4));
    assert.equal(b.size, 4);
    const c = await cache.file('c', fetchBytes(4)); // 12 bytes: a, the oldest, goes
    await gone(a.path);
    assert.equal(existsSync(b.path) && existsSync(c.path), true, 'b and c stay');
    const big = await cache.file('big', fetchBytes(20)); // over the bytes kept alone: the others go, it stays
    await gone(b.path);
    await gone(c.path);
    assert.equal(existsSync(big.path), true, 'the file just fetched stays');
  });
});
