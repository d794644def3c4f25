export { ERROR_CODES, type ErrorCode } from './codes.ts';
export {
  asFerryError,
  FerryError,
  formatLocation,
  guard,
  guarded,
  isFerryError,
  kindOfCode,
  type ErrorKind,
  type ErrorLocation,
  type FerryErrorOptions,
} from './ferry-error.ts';
export { EXIT, exitCodeFor, exitCodeForCode } from './exit-codes.ts';
export { parseOptions } from './options.ts';
