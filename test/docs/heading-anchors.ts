// The anchors GitHub gives a page's headings, shared by the docs tests that check links to them.

/** Each heading's anchor: lower case, punctuation dropped, spaces as hyphens, repeats numbered (-1, -2...). */
export function headingAnchors(headings: Iterable<string>): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const heading of headings) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
