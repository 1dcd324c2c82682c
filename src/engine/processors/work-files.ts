// A job's work files: each `<output>.<name>` beside the output in the media's folder, made private (600)
// before a program writes into it, and all gone when the job ends or starts over.
import { readdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The path of one work file (`<output>.<name>`). */
export type WorkFile = (name: string) => string;

export function workFiles(outputPath: string): WorkFile {
  return (name) => `${outputPath}.${name}`;
}

/**
 * Creates `path` empty and for the engine's account only (600, as every media file): ffmpeg writes into it
 * as it is (-y truncates, keeping the mode), where a file it made would take the umask's 644.
 */
export async function privateFile(path: string): Promise<void> {
  await writeFile(path, '', { mode: 0o600 });
}

/**
 * Removes every work file of the output (`output.*`): those an engine stopped mid-job left behind (the job
 * starts over, so they go), and those of a job that ended.
 */
export async function removeWorkFiles(outputPath: string): Promise<void> {
  const folder = dirname(outputPath);
  const prefix = `${basename(outputPath)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(
    names.filter((name) => name.startsWith(prefix)).map((name) => rm(join(folder, name), { force: true })),
  );
}
