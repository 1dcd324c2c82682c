// The engine CLI's command line read into engine options, by the table of flags (cli-flags.ts): each value
// checked by the rule the engine applies to its option, an error naming the flag.
import { parseArgs } from 'node:util';
import {
  CLI_DEFAULT_DATA_DIR,
  CLI_DEFAULT_PORT,
  FLAGS,
  type CliEngineOptions,
  type Flag,
  type OptionPath,
} from './cli-flags';
import { parseNetworks } from './jobs/address-policy';
import { resolveStorage, type EngineOptions } from './options';

/** What the command line says: the engine options, and the flags the CLI reads itself. */
export interface ParsedFlags {
  options: CliEngineOptions;
  help: boolean;
  quiet: boolean;
  dataDir: string;
  keys: string[];
  keyFile: string | undefined;
  /** --redis, else MEDIA_ENHANCE_REDIS. */
  redis: string | undefined;
}

/**
 * Reads the command line. Each flag is checked by the rule the engine applies to its option, and an error
 * names the flag, the rule and the value; all are checked before anything is written, so a refused start
 * leaves no trace.
 */
export function parseFlags(args: string[], env: NodeJS.ProcessEnv = process.env): ParsedFlags {
  const { values } = parseArgs({
    args,
    options: Object.fromEntries(
      FLAGS.map((flag) => [
        flag.name,
        {
          type: flag.kind === 'switch' ? ('boolean' as const) : ('string' as const),
          ...(flag.kind === 'strings' ? { multiple: true } : {}),
          ...(flag.short ? { short: flag.short } : {}),
        },
      ]),
    ),
  });
  const options: CliEngineOptions = { limits: {}, server: {}, faults: {}, retention: {} };
  for (const flag of FLAGS) {
    const raw = values[flag.name];
    if (raw === undefined || flag.option === undefined) continue;
    if (flag.kind === 'number') {
      const value = checkedNumber(flag, String(raw));
      setOption(options, flag.option, flag.toOption ? flag.toOption(value) : value);
    } else if (flag.kind === 'strings') {
      const list = raw as string[];
      if (flag.name === 'allow-fetch-from') parseNetworks(list, '--allow-fetch-from');
      setOption(options, flag.option, list);
    } else if (flag.kind === 'switch') {
      // A switch only ever turns an option on: without it, the engine's own default holds.
      if (raw === true) setOption(options, flag.option, true);
    } else {
      setOption(options, flag.option, raw);
    }
  }
  Object.assign(options, storageOptions(values as Parameters<typeof storageOptions>[0]));
  const redis = (values.redis as string | undefined) ?? (env.MEDIA_ENHANCE_REDIS || undefined);
  if (redis !== undefined) options.redis = redis;
  options.port ??= CLI_DEFAULT_PORT;
  return {
    options,
    help: values.help === true,
    quiet: values.quiet === true,
    dataDir: (values['data-dir'] as string | undefined) ?? CLI_DEFAULT_DATA_DIR,
    keys: (values.key as string[] | undefined) ?? [],
    keyFile: values['key-file'] as string | undefined,
    redis,
  };
}

function checkedNumber(flag: Flag, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !flag.rule!.test(value))
    throw new Error(`--${flag.name}: ${flag.rule!.text} (got "${raw}")`);
  return value;
}

function setOption(options: CliEngineOptions, path: OptionPath, value: unknown): void {
  const [group, field] = path.split('.') as [keyof CliEngineOptions, string | undefined];
  if (field === undefined) (options as Record<string, unknown>)[group] = value;
  else (options[group] as Record<string, unknown>)[field] = value;
}

/** The S3 flags, checked together as the engine checks its options, an error naming the flag. */
function storageOptions(values: {
  storage?: string;
  's3-endpoint'?: string;
  's3-region'?: string;
  's3-force-path-style'?: boolean;
}): Pick<EngineOptions, 'storage' | 's3'> {
  const s3 = {
    ...(values['s3-endpoint'] !== undefined ? { endpoint: values['s3-endpoint'] } : {}),
    ...(values['s3-region'] !== undefined ? { region: values['s3-region'] } : {}),
    ...(values['s3-force-path-style'] ? { forcePathStyle: true } : {}),
  };
  const given = values.storage === undefined && Object.keys(s3).length === 0 ? {} : { storage: values.storage, s3 };
  try {
    resolveStorage(given.storage, given.s3);
  } catch (err) {
    // The option's name as the shell knows it: storage -> --storage, s3.endpoint -> --s3-endpoint.
    const message = (err as Error).message.replace(/^s3\.(\w+)/, (_, name: string) =>
      name === 'forcePathStyle' ? '--s3-force-path-style' : `--s3-${name}`,
    );
    throw new Error(
      message.replace(/^(storage|s3):/, (_, name: string) => (name === 's3' ? '--s3-*:' : '--storage:')),
      { cause: err },
    );
  }
  return given;
}
