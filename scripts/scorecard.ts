// npm run scorecard: the Node-RED catalogue's scorecard (node-red-dev validate) for this package.
// Only the public catalogue is out of reach from here, so node-red-dev is given an empty one: its
// name-similarity check (P08) then has nothing to compare with, and says nothing about the real catalogue.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const NODE_RED_DEV = 'node-red-dev@0.1.6';

// Preloaded into node-red-dev: every axios instance answers the catalogue URL with an empty catalogue.
const OFFLINE_CATALOGUE = `
const Module = require('module');
const load = Module._load;
Module._load = function (request) {
  const exported = load.apply(this, arguments);
  if (request === 'axios' && exported && exported.interceptors && !exported.__emptyCatalogue) {
    exported.__emptyCatalogue = true;
    exported.interceptors.request.use((config) => {
      if (/^https:\\/\\/catalogue\\.nodered\\.org\\//.test(config.url)) {
        config.adapter = async () => ({ data: { modules: [] }, status: 200, statusText: 'OK', headers: {}, config });
      }
      return config;
    });
  }
  return exported;
};
`;

const work = mkdtempSync(join(tmpdir(), 'scorecard-'));
try {
  const preload = join(work, 'empty-catalogue.js');
  writeFileSync(preload, OFFLINE_CATALOGUE);
  mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
  execFileSync(
    'npx',
    ['--yes', NODE_RED_DEV, 'validate', '-p', ROOT, '-o', join(ROOT, 'test-artifacts', 'scorecard.json')],
    {
      stdio: 'inherit',
      env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() },
    },
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
