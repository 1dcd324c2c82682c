// HTML and SVG text built from strings: every value is escaped where it enters.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `<tag attr="value"...>`, values escaped; null and false leave an attribute out. */
export function openTag(tag: string, attributes: Record<string, string | number | boolean | null> = {}): string {
  const written = Object.entries(attributes)
    .filter(([, value]) => value !== null && value !== false)
    .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`));
  return `<${tag}${written.join('')}>`;
}

/** An element holding escaped text. */
export function element(
  tag: string,
  attributes: Record<string, string | number | boolean | null>,
  text: string,
): string {
  return `${openTag(tag, attributes)}${escapeHtml(text)}</${tag}>`;
}
