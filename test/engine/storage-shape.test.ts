// The storage wing's shape, read from its sources: a media's uid is born in one place (media-uid.ts),
// and storage's files import each other without a circle, so each can be read knowing only what is below it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const STORAGE = join(ROOT, 'src', 'engine', 'storage');

/** Each storage file's imports of its sibling files (`./x`), by module name. */
function siblingImports(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(STORAGE).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(join(STORAGE, file), 'utf8');
    const imports = [...text.matchAll(/from '\.\/([\w.-]+)'/g)].map((match) => match[1]);
    graph.set(file.replace(/\.ts$/, ''), imports);
  }
  return graph;
}

/** A circle of imports in `graph`, as the modules around it, or undefined when there is none. */
export function findCircle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (module: string): string[] | undefined => {
    if (state.get(module) === 'done') return undefined;
    if (state.get(module) === 'open') return [...path.slice(path.indexOf(module)), module];
    state.set(module, 'open');
    path.push(module);
    for (const next of graph.get(module) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    state.set(module, 'done');
    return undefined;
  };
  for (const module of graph.keys()) {
    const circle = visit(module);
    if (circle) return circle;
  }
  return undefined;
}

/** Every .ts file under `folder`, however deep. */
function sources(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name));
}

describe('engine storage: its shape', function () {
  it("storage's files import each other without a circle", () => {
    const graph = siblingImports();
    assert.ok(graph.size >= 10, `${graph.size} storage files read`);
    assert.equal(findCircle(graph)?.join(' -> '), undefined);
  });

  it('finds a circle where there is one (the check itself)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', []],
    ]);
    assert.deepEqual(findCircle(graph), ['a', 'b', 'c', 'a']);
    assert.equal(
      findCircle(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
      undefined,
    );
  });

  it("a media's uid is made in one place, media-uid.ts", () => {
    const makers = sources(join(ROOT, 'src', 'engine'))
      .filter((file) => /randomUUID\(/.test(readFileSync(file, 'utf8')))
      .map((file) => file.slice(ROOT.length + 1));
    assert.deepEqual(makers, [join('src', 'engine', 'storage', 'media-uid.ts')]);
  });
});
