// The text of the engine CLI's `--help`, made from the table of flags (cli-flags.ts): a row per flag in
// its section, every default read from the table.
import { FLAG_SECTIONS, type Flag } from './cli-flags';

/** Where a help row's text starts. */
const HELP_COLUMN = 32;

/** One help row: the label at two spaces in, its text from the help column (on the next line when the label reaches it). */
function helpRow(label: string, text: string): string {
  const [first = '', ...rest] = text.split('\n');
  const indent = ' '.repeat(HELP_COLUMN);
  const head = `  ${label}`;
  const firstRow =
    head.length <= HELP_COLUMN - 2 ? `${head.padEnd(HELP_COLUMN)}${first}` : `${head}\n${indent}${first}`;
  return [firstRow, ...rest.map((line) => `${indent}${line}`)].join('\n');
}

function flagLabel(flag: Flag): string {
  return `${flag.short ? `-${flag.short}, ` : ''}--${flag.name}${flag.arg ? ` ${flag.arg}` : ''}`;
}

/** The text of `--help`, every default in it read from the table. */
export function helpText(): string {
  const sections = FLAG_SECTIONS.map((section) =>
    [
      ...(section.title ? [section.title] : []),
      ...(section.before ?? []).map((row) => helpRow(row.label, row.help)),
      ...section.flags.map((flag) =>
        helpRow(flagLabel(flag), flag.help.replaceAll('{default}', String(flag.default ?? ''))),
      ),
      ...(section.after ?? []),
    ].join('\n'),
  );
  return [
    'Usage: media-enhance-engine [options]',
    '',
    'Runs the local media enhancement engine: the service interface on loopback.',
    '',
    sections.join('\n\n'),
    '',
  ].join('\n');
}
