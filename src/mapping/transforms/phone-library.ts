/**
 * libphonenumber-js, loaded when a phone number is first read or checked: a run whose mappings
 * write no phone number (organisations, notes, tasks, an export, a verify) does not load it. It
 * is a fifth of the code a command loads, and its metadata is built as it loads: about 50 ms of
 * CPU at every start of a command. The command line's bundle leaves it to this require at run
 * time (a require made by createRequire is not bundled), so it is read from node_modules then.
 */
import { createRequire } from 'node:module';
import type * as PhoneLibrary from 'libphonenumber-js';

const require = createRequire(import.meta.url);

let library: typeof PhoneLibrary | undefined;
let metadata: unknown;

/** The library's functions. */
export function phoneLibrary(): typeof PhoneLibrary {
  library ??= require('libphonenumber-js') as typeof PhoneLibrary;
  return library;
}

/** The library's `min` metadata (the one its default functions use), as JSON. */
export function phoneMetadataJson(): unknown {
  metadata ??= require('libphonenumber-js/min/metadata') as unknown;
  return metadata;
}
