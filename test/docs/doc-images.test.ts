// The checkout stays clean: a test writes an image under docs/images/ only when DOC_IMAGES=1 is set, so every
// test names the place of a documentation image through docImagePath (test/fixtures/doc-images.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { docImagePath } from '../fixtures/doc-images';

const ROOT = join(__dirname, '..', '..', '..');

describe('docs: the tests leave docs/images/ alone unless DOC_IMAGES=1', () => {
  it('puts a documentation image in test-artifacts/screenshots/, and in docs/images/ only with DOC_IMAGES=1', () => {
    assert.equal(relative(ROOT, docImagePath('sidebar.png', {})), join('test-artifacts', 'screenshots', 'sidebar.png'));
    assert.equal(
      relative(ROOT, docImagePath('sidebar.png', { DOC_IMAGES: '0' })),
      join('test-artifacts', 'screenshots', 'sidebar.png'),
    );
    assert.equal(
      relative(ROOT, docImagePath('sidebar.png', { DOC_IMAGES: '1' })),
      join('docs', 'images', 'sidebar.png'),
    );
  });

  it('no test source names docs/images/ but that helper', () => {
    const sources = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter((path) =>
      path.endsWith('.ts'),
    );
    const naming = sources.filter(
      (path) =>
        ![join('fixtures', 'doc-images.ts'), join('docs', 'doc-images.test.ts')].includes(path) &&
        /docs['"`]\s*,\s*['"`]images|docs\/images/.test(readFileSync(join(ROOT, 'test', path), 'utf8')),
    );
    assert.deepEqual(naming, [], 'these tests name docs/images/ themselves');
  });
});
