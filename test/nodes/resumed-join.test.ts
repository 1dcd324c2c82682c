// What a delivery resumed after a restart does with a file whose intro and outro were being joined, as
// the kept message recorded it: joined again where it lies while the join has not replaced it; handed on
// with the report recorded just before the replacement once it has; never fetched again, never joined twice.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaEnhanceClient } from '../../src/client/client';
import { deliverOutputs, type KeptFile } from '../../src/nodes/deliver-outputs';
import type { Job } from '../../src/nodes/message-jobs';
import { english } from '../../src/nodes/texts';

/** A client the resumed delivery must not use: each file is on disk already. */
const NO_CLIENT = new Proxy({} as MediaEnhanceClient, {
  get: (_target, name) => () => {
    throw new Error(`the file was fetched again (client.${String(name)})`);
  },
});

const JOB = { t: english, show: () => undefined, signal: new AbortController().signal } as unknown as Job;
const WANTED = [{ name: 'enhanced', step: 'ENHANCED' as const, fileName: 'episode.wav' }];

describe('nodes: a delivery resumed while its intro and outro were being joined', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await fsp.mkdtemp(join(tmpdir(), 'me-resumed-join-'));
    path = join(folder, 'episode.wav');
    await fsp.writeFile(path, 'the downloaded episode');
  });
  afterEach(() => fsp.rm(folder, { recursive: true, force: true }));

  /** The file as the kept message recorded it once downloaded, with `extra` (an earlier run's report). */
  async function recorded(extra: Partial<KeptFile> = {}): Promise<KeptFile> {
    const { ino, size, mtimeMs } = await fsp.stat(path);
    const file = { name: 'enhanced', path, contentType: 'audio/wav', file_name: 'episode.wav', format: 'wav' };
    return { ...file, joining: { ino, size, mtimeMs }, ...extra };
  }

  /** Delivers `delivered` again with a join that replaces the file as the real one does; answers what happened. */
  async function resume(delivered: KeptFile[]) {
    const joins: string[] = [];
    const kept: KeptFile[] = [];
    const join = async (at: string, beforeReplace: (episode: unknown) => Promise<void>) => {
      joins.push(at);
      await beforeReplace({ joined: joins.length });
      await fsp.writeFile(`${at}.new`, 'intro + episode');
      await fsp.rename(`${at}.new`, at);
      return { joined: joins.length };
    };
    const place = {
      toFile: true,
      folder,
      ifExists: 'number' as const,
      delivered,
      keepDelivered: (f: KeptFile) => {
        kept.push(f);
        return Promise.resolve();
      },
    };
    const files = await deliverOutputs(JOB, NO_CLIENT, 'uid', WANTED, place, join, (err) => err);
    return { files, joins, kept, content: await fsp.readFile(path, 'utf8'), names: await fsp.readdir(folder) };
  }

  it('the join had not replaced the file: joined again where it lies, once, and recorded as finished', async () => {
    const { files, joins, kept, content, names } = await resume([await recorded({ episode: { joined: 0 } })]);
    assert.deepEqual(joins, [path]);
    assert.equal(content, 'intro + episode');
    assert.deepEqual(names, ['episode.wav']);
    assert.deepEqual(
      files.map((f) => [f.path, f.episode]),
      [[path, { joined: 1 }]],
    );
    assert.deepEqual(
      kept.map((f) => [f.joining !== undefined, f.episode]),
      [
        [true, undefined],
        [true, { joined: 1 }],
        [false, { joined: 1 }],
      ],
      'recorded before the join, just before the replacement, and finished',
    );
  });

  it('the join had replaced the file before the restart: handed on with the report recorded before, not joined twice', async () => {
    const before = await recorded({ episode: { joined: 1 } });
    await fsp.writeFile(`${path}.new`, 'intro + episode');
    await fsp.rename(`${path}.new`, path);
    const { files, joins, content } = await resume([before]);
    assert.deepEqual(joins, [], 'not joined again');
    assert.equal(content, 'intro + episode');
    assert.deepEqual(files, [
      {
        name: 'enhanced',
        path,
        contentType: 'audio/wav',
        file_name: 'episode.wav',
        format: 'wav',
        episode: { joined: 1 },
      },
    ]);
  });
});
