// Where a finished download's final name goes on a file system without hard links (FAT, exFAT, some
// network shares): placeFile copies there, and a crash after the copy but before the journal knew must
// still find that copy in place, not fetch a numbered second one beside it.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sinon from 'sinon';
import { stampOf } from '../../src/client/file-stamp';
import { findPlaced, placeFile } from '../../src/client/final-name';
import { claimPartFile, openPart } from '../../src/client/part-file';

describe('the final name where the file system has no hard links', function () {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'final-name-'));
  });
  afterEach(async () => {
    sinon.restore();
    await rm(dir, { recursive: true, force: true });
  });

  async function finishedPart(bytes: string) {
    const part = await claimPartFile(join(dir, '.uid.ENHANCED.talk.wav'), true);
    const handle = await openPart(part, false);
    await handle.writeFile(bytes);
    await handle.close();
    return part;
  }

  it('copies the part, and findPlaced knows the copy by the stamp noted before it was placed', async () => {
    const part = await finishedPart('the enhanced audio');
    const stamp = await stampOf(part.path);
    sinon.stub(fsp, 'link').rejects(Object.assign(new Error('operation not permitted'), { code: 'EPERM' }));
    const wanted = join(dir, 'talk.wav');
    await writeFile(wanted, 'a file already there');

    const placed = await placeFile(part, wanted, { ifExists: 'number' }, 'uid');

    assert.equal(placed, join(dir, 'talk (1).wav'));
    assert.equal(await fsp.readFile(placed, 'utf8'), 'the enhanced audio');
    assert.notEqual((await fsp.stat(placed)).ino, stamp.ino, 'a copy, not a link');
    assert.equal(await findPlaced(wanted, stamp), placed);
  });

  it('does not take another file of the same size for the copy', async () => {
    const part = await finishedPart('the enhanced audio');
    const stamp = await stampOf(part.path);
    await writeFile(join(dir, 'talk.wav'), 'another same-sized');
    await fsp.utimes(join(dir, 'talk.wav'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    assert.equal(await findPlaced(join(dir, 'talk.wav'), stamp), undefined);
  });
});
