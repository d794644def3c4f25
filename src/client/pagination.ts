/** The links of an RFC 5988 `Link` header, by relation: `{next: url, prev: url}`. */
export function parseLinkHeader(value: string | string[] | undefined): Record<string, string> {
  const text = Array.isArray(value) ? value.join(', ') : value;
  const links: Record<string, string> = {};
  if (!text) return links;
  // Split on commas that start a new `<...>` entry; URLs may hold commas of their own (id lists).
  for (const part of text.split(/,\s*(?=<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!match) continue;
    const rel = /\brel\s*=\s*"?([^";]+)"?/i.exec(match[2] as string);
    if (!rel) continue;
    for (const name of (rel[1] as string).trim().split(/\s+/)) links[name.toLowerCase()] = match[1] as string;
  }
  return links;
}
