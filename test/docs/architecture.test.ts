// docs/architecture.md's table of floors against the code: every folder of src/ has its row, imports only
// the folders its row names (type imports too), and no file imports itself through others (an import
// circle); and each folder's README.md says what its row says it may import, so the map cannot drift
// from the house.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const SRC = join(ROOT, 'src');

/** Every .ts file under src/, as a path from src/ with '/' (audio/wav-reader.ts). */
function sources(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) found.push(relative(SRC, path).split(sep).join('/'));
    }
  };
  walk(SRC);
  return found.sort();
}

/** The files a source imports or re-exports from within src/, type imports included. */
function importsOf(file: string, all: Set<string>): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)) {
    const path = normalize(join(dirname(file), match[1]))
      .split(sep)
      .join('/');
    const target = [`${path}.ts`, `${path}/index.ts`].find((candidate) => all.has(candidate));
    if (target) targets.push(target);
  }
  return targets;
}

/** A file's floor: its first folder under src/ (or the file itself at src/'s top). */
const floorOf = (file: string) => file.split('/')[0];

/** The table's rows: each floor and the floors its imports column names. */
function tableOfFloors(): Map<string, Set<string>> {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows = new Map<string, Set<string>>();
  for (const [, floor, imports] of doc.matchAll(/^\| `src\/([\w-]+)\/` \|[^|]*\| ([^|]*) \|$/gm))
    rows.set(floor, new Set(imports.match(/[\w-]+/g) ?? []));
  return rows;
}

/**
 * The floors a folder's README.md names in its "May import:" paragraph, of those in `floors`; undefined
 * when it has no README or no such paragraph.
 */
function readmeImports(folder: string, floors: Set<string>): Set<string> | undefined {
  const path = join(SRC, folder, 'README.md');
  if (!existsSync(path)) return undefined;
  const paragraph = /^May import: ((?:.+\n?)+)/m.exec(readFileSync(path, 'utf8'))?.[1];
  return paragraph === undefined ? undefined : namedFloors(paragraph, floors);
}

/** The floors among the words of `text` (a table's column or a README's line names them among other words). */
function namedFloors(text: string, floors: Set<string>): Set<string> {
  return new Set((text.match(/[\w-]+/g) ?? []).filter((word) => floors.has(word)));
}

type Graph = Map<string, string[]>;

/** The imports across floors that the table does not name, as "from -> to". */
function strayImports(graph: Graph, table: Map<string, Set<string>>): string[] {
  const stray: string[] = [];
  for (const [file, targets] of graph) {
    const floor = floorOf(file);
    const allowed = table.get(floor);
    if (!allowed) continue; // src/index.ts, the package's entry, may import any floor
    for (const target of targets)
      if (floorOf(target) !== floor && !allowed.has(floorOf(target))) stray.push(`${file} -> ${target}`);
  }
  return stray;
}

/** Each import circle found, as "a -> b -> a". */
function importCircles(graph: Graph): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  return circles;
}

describe('docs/architecture.md: the floors of src/', function () {
  const files = sources();
  const all = new Set(files);
  const graph: Graph = new Map(files.map((file) => [file, importsOf(file, all)]));
  const table = tableOfFloors();

  it('has a row for every folder of src/', () => {
    const folders = [...new Set(files.filter((file) => file.includes('/')).map(floorOf))];
    assert.deepEqual(
      folders.filter((folder) => !table.has(folder)),
      [],
    );
  });

  it('has a README.md in every folder of src/ whose "May import" names its row\'s floors', () => {
    const floors = new Set(table.keys());
    const disagree = [...floors].flatMap((floor) => {
      const said = readmeImports(floor, floors);
      const row = [...namedFloors([...table.get(floor)!].join(' '), floors)].sort();
      if (said === undefined) return [`src/${floor}/README.md: no "May import:" line`];
      const readme = [...said].sort();
      return readme.join() === row.join()
        ? []
        : [`src/${floor}/README.md names ${readme.join(', ') || 'none'}, the table ${row.join(', ') || 'none'}`];
    });
    assert.deepEqual(disagree, []);
  });

  it('imports across floors only where the table says', () => {
    assert.deepEqual(strayImports(graph, table), [], 'an import the table of floors does not name');
  });

  it('has no import circle between files', () => {
    assert.deepEqual(importCircles(graph), []);
  });

  it('finds a stray import and a circle (the checks themselves)', () => {
    const made: Graph = new Map([
      ['audio/a.ts', ['audio/b.ts', 'contract/c.ts']],
      ['audio/b.ts', ['engine/e.ts', 'audio/a.ts']],
      ['contract/c.ts', []],
      ['engine/e.ts', []],
    ]);
    const floors = new Map([['audio', new Set(['contract'])]]);
    assert.deepEqual(strayImports(made, floors), ['audio/b.ts -> engine/e.ts']);
    assert.deepEqual(importCircles(made), ['audio/a.ts -> audio/b.ts -> audio/a.ts']);
  });
});
