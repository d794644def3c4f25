/**
 * True when the runtime knows the IANA zone name. UTC, every mapping's default, is known without
 * asking: the first `Intl.DateTimeFormat` a process makes loads the zone data, about 30 ms of CPU
 * that a run whose mappings hold no dates would spend on this check alone.
 */
export function isKnownTimeZone(zone: string): boolean {
  if (zone === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
