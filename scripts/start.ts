// npm start: Node-RED (this project's devDependency) with this package installed the way a user installs
// a palette package (npm install of the packed tarball), the example flows added to its flows (once: see test/fixtures/example-flows.ts), on the built-in
// local engine. Everything listens on loopback only. Ctrl-C stops Node-RED, which stops the engine.
//
// Environment: PORT (default 1880), NODE_RED_USER_DIR (default .node-red-user/ in the repo).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deployExamples } from '../test/fixtures/example-flows';
import { PACKAGE_NAME, ROOT, packPackage, spawnNodeRed } from '../test/fixtures/node-red-process';

const userDir = resolve(process.env.NODE_RED_USER_DIR ?? join(ROOT, '.node-red-user'));
const port = Number(process.env.PORT ?? 1880);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function installPackage(): void {
  mkdirSync(userDir, { recursive: true });
  if (!existsSync(join(userDir, 'package.json'))) {
    writeFileSync(
      join(userDir, 'package.json'),
      `${JSON.stringify({ name: 'node-red-user-dir', description: 'made by npm start', private: true, dependencies: {} }, null, 2)}\n`,
    );
  }
  const packs = join(userDir, 'packs');
  rmSync(packs, { recursive: true, force: true });
  const tarball = packPackage(packs);
  // Install again only when the package changed: a second start takes seconds, not a minute.
  const digest = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  const stamp = join(userDir, '.installed-package');
  const installed = join(userDir, 'node_modules', ...PACKAGE_NAME.split('/'));
  if (existsSync(installed) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return;
  console.log(`installing ${PACKAGE_NAME} into ${userDir} ...`);
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--omit=dev', '--save', tarball], {
    cwd: userDir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(stamp, digest);
}

/** A secret of this user dir that encrypts flow credentials (an API key typed in the editor). */
function credentialSecret(): string {
  const file = join(userDir, '.credential-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The first line of the settings.js that earlier versions of npm start rewrote on every start. */
const REWRITTEN_EACH_RUN = '// Made by npm start on each run';

/**
 * Node-RED's settings.js for this user dir, written on the first start only: a user tunes the engine
 * there (workers, ffmpeg, limits, Redis, S3), so a later start must keep their edits. What changes
 * between starts (the port) comes from the environment, and the file reads the rest from its own folder.
 */
function settingsFile(): string {
  const settings = join(userDir, 'settings.js');
  credentialSecret(); // the file reads it from .credential-secret beside it
  if (existsSync(settings)) {
    if (!readFileSync(settings, 'utf8').startsWith(REWRITTEN_EACH_RUN)) return settings;
    // The old generated file said to edit scripts/start.ts; still keep what it held, beside the new one.
    renameSync(settings, `${settings}.old`);
    console.log(`npm start: ${settings} is now written once and kept; the previous one is ${settings}.old`);
  }
  writeFileSync(settings, SETTINGS_TEMPLATE);
  console.log(`npm start: wrote ${settings} (yours to edit: a later start keeps it)`);
  return settings;
}

const SETTINGS_TEMPLATE = `// Node-RED's settings for npm start, written on the first start and never overwritten: yours to edit
// (delete it to get this one back). Node-RED reads it when it starts: Ctrl-C and npm start again.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

module.exports = {
  uiHost: '127.0.0.1',
  uiPort: Number(process.env.PORT || 1880), // npm start passes PORT
  flowFile: 'flows.json',
  // Encrypts flow credentials (an API key typed in the editor): a secret npm start made for this folder.
  credentialSecret: readFileSync(join(__dirname, '.credential-secret'), 'utf8').trim(),
  // Relative paths of file nodes and of the download node: inbox/ and outbox/ live here.
  fileWorkingDirectory: __dirname,
  // The built-in engine: finished media are removed 7 days after their last use, or sooner, oldest
  // first, while all of them take more than 5 GiB (null: no limit); none still processing, none asked
  // for within the last hour. Workers, limits, the ffmpeg program, Redis and S3 go here too, e.g.
  // engine: { workers: 1, ffmpegPath: '/usr/bin/ffmpeg', retention: { ... } } (see the README).
  mediaEnhance: { engine: { retention: { maxAgeMs: 7 * 24 * 3600e3, maxTotalBytes: 5 * 1024 ** 3 } } },
  logging: { console: { level: 'info', metrics: false, audit: false } },
  // No request leaves this machine: no palette catalogue, no update check.
  editorTheme: { projects: { enabled: false }, tours: false, palette: { catalogues: [] } },
  telemetry: { enabled: false, updateNotification: false },
  diagnostics: { enabled: false },
};
`;

function main(): void {
  installPackage();
  const settings = settingsFile();
  for (const line of deployExamples(userDir, join(ROOT, 'examples'))) console.log(`npm start: ${line}`);
  const inbox = join(userDir, 'inbox');
  mkdirSync(inbox, { recursive: true });
  mkdirSync(join(userDir, 'outbox'), { recursive: true });

  const red = spawnNodeRed(userDir, settings, {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
    // Its own process group: Ctrl-C reaches this script only, which then stops Node-RED exactly once.
    detached: true,
  });
  let announced = false;
  red.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    if (!announced && /Server now running at/.test(chunk.toString())) {
      announced = true;
      console.log(`\nNode-RED editor: http://127.0.0.1:${port}/`);
      console.log(
        `Drop an audio file (WAV; MP3, FLAC, Ogg, M4A with ffmpeg) into ${inbox}: it comes out enhanced in ${join(userDir, 'outbox')}.`,
      );
      console.log('Ctrl-C stops Node-RED and the engine.\n');
    }
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    red.kill('SIGINT'); // Node-RED closes every node: the config node stops the engine
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('exit', () => red.exitCode === null && red.kill('SIGKILL'));
  // 'close', not 'exit': Node-RED's last log lines are still in the pipe when it exits.
  red.on('close', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

main();
