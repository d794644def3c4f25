export { ERROR_CODES, type ErrorCode } from './codes.ts';
export { FerryError, formatLocation, isFerryError, type ErrorLocation, type FerryErrorOptions } from './ferry-error.ts';
export { EXIT, exitCodeFor, exitCodeForCode } from './exit-codes.ts';
