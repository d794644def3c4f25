/**
 * iconv-lite, loaded when a file in an encoding other than UTF-8 is first read: most inputs are
 * UTF-8, and iconv-lite (a fifth of the code the command line loads for a run, most of it the
 * tables of its encodings, made as it loads) is not loaded for them. The command line's bundle
 * leaves it to this require at run time (a require made by createRequire is not bundled).
 */
import { createRequire } from 'node:module';
import type Iconv from 'iconv-lite';

const require = createRequire(import.meta.url);

let library: typeof Iconv | undefined;

export function iconvLite(): typeof Iconv {
  library ??= require('iconv-lite') as typeof Iconv;
  return library;
}
