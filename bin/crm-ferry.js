#!/usr/bin/env node
// Runs the JavaScript that `npm ci` compiled into dist/ (the `prepare` script), which starts in a
// tenth of a second. When dist/ is missing or older than a source file (someone is editing src/),
// it runs the TypeScript sources through tsx instead, so a change is never run stale.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function compiledIsFresh() {
  let built;
  try {
    built = statSync(`${root}dist/.build-stamp`).mtimeMs;
  } catch {
    return false;
  }
  for (const name of readdirSync(`${root}src`, { recursive: true })) {
    if (name.endsWith('.ts') && statSync(`${root}src/${name}`).mtimeMs > built) return false;
  }
  return true;
}

let main;
if (compiledIsFresh()) {
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
