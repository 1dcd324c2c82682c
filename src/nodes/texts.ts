// The sentences the nodes show and log (statuses, warnings, errors of their own), looked up in Node-RED's
// message catalogs, nodes/locales/<language>/<node file>.json, as Node-RED's own nodes do: a translation
// is a new JSON file. A key's first segment names its catalog: `media-enhance-wait.…` is in the wait
// node's, and `media-enhance.…`, the texts every media node shares, is in the config node's (the
// service they all use). Placeholders are written __name__, as Node-RED's i18n writes them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedApi } from './red';

export type Translate = (key: string, values?: Record<string, string | number>) => string;

const ROOT = join(__dirname, '..', '..', '..');
const ENGLISH = join(ROOT, 'nodes', 'locales', 'en-US');
/** Node-RED names a node file's catalog `<module>/<node file>`. */
const MODULE = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const SHARED = 'media-enhance';
const SHARED_CATALOG = 'media-enhance-config';

/** The node file whose catalog holds `key`. */
export function catalogOf(key: string): string {
  const first = key.split('.', 1)[0];
  return first === SHARED ? SHARED_CATALOG : first;
}

/** Looks texts up through `RED._`, with the package's English where the runtime has no such message. */
export function translator(RED: Pick<RedApi, '_'>): Translate {
  return (key, values) => {
    const namespaced = `${MODULE}/${catalogOf(key)}:${key}`;
    const text = RED._(namespaced, values);
    // i18n answers with the key when it has no message for it: a runtime that loads no catalogs (as
    // node-red-node-test-helper's `RED._`, which answers every key with itself) still shows English.
    return typeof text === 'string' && text !== namespaced && text !== key ? text : english(key, values);
  };
}

const catalogs = new Map<string, unknown>();

/** The English catalog of a node file, as nodes/locales/en-US holds it. */
export function englishCatalog(file: string): unknown {
  if (!catalogs.has(file)) {
    let catalog: unknown = {};
    try {
      catalog = JSON.parse(readFileSync(join(ENGLISH, `${file}.json`), 'utf8'));
    } catch {
      // no such node file: every key of it answers with itself
    }
    catalogs.set(file, catalog);
  }
  return catalogs.get(file);
}

/** The English text of `key`, or the key itself when the catalog has none (as i18n answers). */
export function english(key: string, values: Record<string, string | number> = {}): string {
  let found: unknown = englishCatalog(catalogOf(key));
  for (const segment of key.split('.')) found = (found as Record<string, unknown> | undefined)?.[segment];
  if (typeof found !== 'string') return key;
  return found.replace(/__(\w+)__/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
