/** The delimiters crm-ferry recognises on its own, in the order ties are broken. */
export const SNIFFED_DELIMITERS = [',', ';', '\t', '|'] as const;

export interface DelimiterGuess {
  delimiter: string;
  /** False when no candidate appeared at all and `,` was assumed (a one-column file). */
  found: boolean;
}

/** Counts each candidate per record, outside quotes, over the first records of a text prefix. */
function countPerRecord(text: string, complete: boolean, maxRecords: number): Map<string, number[]> {
  const counts = new Map<string, number[]>(SNIFFED_DELIMITERS.map((d) => [d, []]));
  const current = new Map<string, number>(SNIFFED_DELIMITERS.map((d) => [d, 0]));
  let inQuotes = false;
  let records = 0;
  let recordHasText = false;
  const close = (): void => {
    if (recordHasText) {
      for (const d of SNIFFED_DELIMITERS) (counts.get(d) as number[]).push(current.get(d) as number);
      records++;
    }
    for (const d of SNIFFED_DELIMITERS) current.set(d, 0);
    recordHasText = false;
  };
  for (let i = 0; i < text.length && records < maxRecords; i++) {
    const c = text[i] as string;
    if (c === '"') {
      inQuotes = !inQuotes;
      recordHasText = true;
    } else if (!inQuotes && (c === '\n' || c === '\r')) {
      close();
    } else {
      recordHasText = true;
      if (!inQuotes && current.has(c)) current.set(c, (current.get(c) as number) + 1);
    }
  }
  // A record cut by the end of the prefix would skew the counts; keep it only when the text is all there.
  if (complete && !inQuotes) close();
  return counts;
}

/**
 * Picks the delimiter that splits the first records into the same number of fields most often.
 * Quoted text is ignored, so commas inside quoted notes do not outvote the real `;`.
 */
export function sniffDelimiter(text: string, complete: boolean): DelimiterGuess {
  const counts = countPerRecord(text, complete, 50);
  let best: { delimiter: string; score: number; fields: number } | undefined;
  for (const delimiter of SNIFFED_DELIMITERS) {
    const perRecord = counts.get(delimiter) as number[];
    if (perRecord.length === 0) continue;
    const frequency = new Map<number, number>();
    for (const n of perRecord) if (n > 0) frequency.set(n, (frequency.get(n) ?? 0) + 1);
    let mode = 0;
    let modeCount = 0;
    for (const [n, c] of frequency) {
      if (c > modeCount || (c === modeCount && n > mode)) {
        mode = n;
        modeCount = c;
      }
    }
    if (mode === 0) continue;
    // Consistency first (share of records with the usual count), then more columns.
    const score = modeCount / perRecord.length;
    if (!best || score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && mode > best.fields)) {
      best = { delimiter, score, fields: mode };
    }
  }
  return best ? { delimiter: best.delimiter, found: true } : { delimiter: ',', found: false };
}
