/**
 * libphonenumber-js, loaded when a phone number is first read or checked: a run whose mappings
 * write no phone number (organisations, notes, tasks, an export, a verify) does not load it. It
 * is a fifth of the code a command loads, and its metadata is built as it loads: about 50 ms of
 * CPU at every start of a command.
 */
import type * as PhoneLibrary from 'libphonenumber-js';
import { lazyModule } from '../../util/index.ts';

/** The library's functions. */
export const phoneLibrary = lazyModule<typeof PhoneLibrary>('libphonenumber-js');

/** The library's `min` metadata (the one its default functions use), as JSON. */
export const phoneMetadataJson = lazyModule<unknown>('libphonenumber-js/min/metadata');
