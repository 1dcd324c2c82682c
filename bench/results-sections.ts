// bench/RESULTS.md is written by more than one run (npm run bench, npm run soak): each replaces its own
// `## ` sections and leaves the others as they are.

/** The section starting at the line `## <heading>` up to the next `## ` line (or the end), without trailing blank lines; undefined if absent. */
export function readSection(markdown: string, heading: string): string | undefined {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line === `## ${heading}`);
  if (start < 0) return undefined;
  let end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n').replace(/\n+$/, '');
}

/** `markdown` with the section `## <heading>` replaced by `section` (which starts with that heading line), or with it added at the end. */
export function replaceSection(markdown: string, heading: string, section: string): string {
  const old = readSection(markdown, heading);
  if (old === undefined) return `${markdown.replace(/\n+$/, '')}\n\n${section}\n`;
  return markdown.replace(old, () => section);
}
