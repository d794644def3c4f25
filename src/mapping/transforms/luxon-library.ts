/**
 * luxon, loaded when a date or timestamp transform is first compiled: a run whose mappings read no
 * dates does not load it (its module builds its parsing expressions as it loads, 10-15 ms of CPU
 * at every start). The command line's bundle leaves it to this require at run time (a require
 * made by createRequire is not bundled), as for libphonenumber-js (phone-library.ts).
 */
import { createRequire } from 'node:module';
import type * as Luxon from 'luxon';

const require = createRequire(import.meta.url);

let library: typeof Luxon | undefined;

export function luxon(): typeof Luxon {
  library ??= require('luxon') as typeof Luxon;
  return library;
}
