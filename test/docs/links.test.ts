// The README and the pages under docs/ link to each other, to images and to files of the checkout: every
// such link leads to a file that exists, and every #anchor to a heading of that file, so moving a section
// from one page to another cannot leave a link behind.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { headingAnchors } from './heading-anchors';

const ROOT = join(__dirname, '..', '..', '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The anchors of a page's headings, those in code blocks left out. */
function anchorsOf(markdown: string): Set<string> {
  const outsideCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return headingAnchors([...outsideCode.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map(([, heading]) => heading));
}

/** The relative links of a page (not http(s), not mailto), outside code blocks. */
function linksOf(markdown: string): string[] {
  const outsideCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...outsideCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => target)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

describe('docs: links between the README and docs/', function () {
  for (const page of PAGES) {
    it(`${page}: every relative link leads to a file, and every #anchor to a heading in it`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const broken: string[] = [];
      for (const link of linksOf(text)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no file ${relative(ROOT, target)}`);
          continue;
        }
        if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${link}: no heading "${anchor}" in ${relative(ROOT, target)}`);
      }
      assert.deepEqual(broken, []);
    });
  }

  it('finds a link to a missing heading (the check itself)', () => {
    assert.ok(anchorsOf('# What it does\n## Limits of the engine’s server\n').has('limits-of-the-engines-server'));
    assert.ok(!anchorsOf('# What it does\n').has('what-it-did'));
    assert.deepEqual(linksOf('[a](docs/x.md#y) [b](https://example.org) [c](z)\n```\n[d](e)\n```'), [
      'docs/x.md#y',
      'z',
    ]);
  });
});
