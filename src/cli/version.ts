import { readFileSync } from 'node:fs';

/** The version in package.json, two folders up from this file whether it runs from src/ or dist/. */
let knownVersion: string | undefined;
export function version(): string {
  knownVersion ??= (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return knownVersion;
}
