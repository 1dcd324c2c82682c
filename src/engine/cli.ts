#!/usr/bin/env node
// media-enhance-engine: runs the local engine from a shell. Its flags are the table in cli-flags.ts.
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CliEngineOptions } from './cli-flags';
import { helpText } from './cli-help';
import { parseFlags } from './cli-parse';
import { startEngine } from './index';
import { withoutPassword } from './options';

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.help) {
    process.stdout.write(helpText());
    return;
  }
  const options: CliEngineOptions = {
    ...flags.options,
    onRemoved: ({ record, reason }) =>
      process.stdout.write(`removed media ${record.uid} ("${record.file_name}"): ${reason}\n`),
    onLogLine: flags.quiet ? undefined : (line) => process.stdout.write(`${line}\n`),
    onErrorLine: (line) => process.stderr.write(`${line}\n`),
  };
  const dataDir = resolve(flags.dataDir);
  await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const { keys, keyNote } = await acceptedKeys(flags.keys, flags.keyFile, dataDir);
  const engine = await startEngine({ ...options, apiKeys: keys, dataDir });
  process.stdout.write(
    `media enhancement engine listening on ${engine.url} (data in ${dataDir}${flags.redis ? `, shared through ${String(withoutPassword(flags.redis))}` : ''}; accepts ${keyNote})\n`,
  );
  const stop = () => {
    process.stdout.write('stopping...\n');
    engine.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The keys of the environment, a key file and the command line, all accepted; without any, the data folder's own key. */
async function acceptedKeys(
  fromFlags: string[],
  keyFile: string | undefined,
  dataDir: string,
): Promise<{ keys: string[]; keyNote: string }> {
  const fromEnv = (process.env.MEDIA_ENHANCE_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  let fromFile: string[] = [];
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = await fsp.readFile(keyFile, 'utf8');
    } catch (err) {
      throw new Error(
        `--key-file: cannot read "${keyFile}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        { cause: err },
      );
    }
    fromFile = text
      .split(/\r?\n/)
      .map((k) => k.trim())
      .filter(Boolean);
    if (fromFile.length === 0) throw new Error(`--key-file: "${keyFile}" holds no key (one key per line is expected)`);
  }
  const keys = [...fromEnv, ...fromFile, ...fromFlags];
  if (keys.length > 0) {
    const sources = [
      fromEnv.length && 'MEDIA_ENHANCE_KEYS',
      fromFile.length && keyFile,
      fromFlags.length && 'the command line',
    ].filter(Boolean);
    return { keys, keyNote: `${keys.length} key(s) from ${sources.join(', ')}` };
  }
  const file = join(dataDir, 'api-key');
  return { keys: [await readOrMakeKey(file)], keyNote: `the key in ${file}` };
}

async function readOrMakeKey(file: string): Promise<string> {
  try {
    const key = (await fsp.readFile(file, 'utf8')).trim();
    if (key) return key;
  } catch {
    // none yet
  }
  const key = randomBytes(24).toString('base64url');
  await fsp.writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}

main().catch((err: unknown) => {
  process.stderr.write(`media-enhance-engine: ${(err as Error).message}\n`);
  process.exit(1);
});
