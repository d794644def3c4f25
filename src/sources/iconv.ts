/**
 * iconv-lite, loaded when a file in an encoding other than UTF-8 is first read: most inputs are
 * UTF-8, and iconv-lite (a fifth of the code the command line loaded for a run, most of it the
 * tables of its encodings, made as it loads) is not loaded for them.
 */
import type Iconv from 'iconv-lite';
import { lazyModule } from '../util/index.ts';

export const iconvLite = lazyModule<typeof Iconv>('iconv-lite');
