/**
 * Names close to a misspelt one, for "did you mean" in messages: one rule for every room (mapping
 * keys and transforms, plan steps, names in the account).
 */
import { distance } from 'fastest-levenshtein';

/** Lower case without anything but letters and digits: "E-Mail Address" -> "emailaddress". */
export function normalizeWord(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * Up to `max` candidates close to `word`, closest first. Comparison ignores case, spaces and
 * punctuation, because header names and targets differ in exactly those ways ("E-mail", "email").
 * A candidate counts as close when at most about a third of it has to change.
 */
export function suggest(word: string, candidates: Iterable<string>, max = 3): string[] {
  const wanted = normalizeWord(word);
  const scored: Array<{ candidate: string; score: number }> = [];
  for (const candidate of candidates) {
    const plain = normalizeWord(candidate);
    if (plain === '' || wanted === '') continue;
    const score = plain === wanted ? 0 : distance(wanted, plain);
    const limit = Math.max(1, Math.floor(Math.max(wanted.length, plain.length) / 3));
    if (score <= limit) scored.push({ candidate, score });
  }
  scored.sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { candidate } of scored) {
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    out.push(candidate);
    if (out.length === max) break;
  }
  return out;
}

/** The closest candidate to `word` when it is close enough to be a typo, or undefined. */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  return suggest(word, candidates, 1)[0];
}

/** `, did you mean \`x\`?` for the closest candidate, or '' when none is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const best = closestName(word, candidates);
  return best === undefined ? '' : `, did you mean \`${best}\`?`;
}
