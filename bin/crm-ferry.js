#!/usr/bin/env node
// Runs the command line that `npm ci` built into dist/bundle/ (the `prepare` script: the sources
// and their dependencies bundled into a few files, build/bundle-cli.ts), which starts in a tenth of
// a second. In a checkout, when the build is missing or older than a source file (someone is
// editing src/), it runs the TypeScript sources through tsx instead, so a change is never run stale.
// tsx is a development dependency: installed from the registry the package has no src/ and never
// needs it; a checkout installed without development dependencies runs its build, saying so.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function compiledIsFresh() {
  // A build from before the command line was bundled has its stamp but no bundle.
  if (!existsSync(`${root}dist/bundle/main.js`)) return false;
  // Installed from the registry or a tarball, inside a node_modules folder, nobody edits the
  // sources, and their times say nothing: npm gives each file the time it unpacked it, src/ after
  // dist/. The build is the package's.
  if (/[\\/]node_modules[\\/]/.test(root)) return true;
  let built;
  try {
    built = statSync(`${root}dist/.build-stamp`).mtimeMs;
  } catch {
    return false;
  }
  return !newerSource(`${root}src`, built);
}

/**
 * Whether a TypeScript file under `dir` changed after `time`. A walk of its own: node 20's
 * recursive readdirSync took four times as long, and this runs at every start in a checkout.
 */
function newerSource(dir, time) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory() ? newerSource(path, time) : entry.name.endsWith('.ts') && statSync(path).mtimeMs > time)
      return true;
  }
  return false;
}

/** tsx's register(), or null when it is not installed. */
async function tsxRegister() {
  try {
    return (await import('tsx/esm/api')).register;
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return null;
    throw error;
  }
}

let main;
const fresh = compiledIsFresh();
const register = fresh ? null : await tsxRegister();
if (register) {
  register();
  ({ main } = await import('../src/cli/main.ts'));
} else if (existsSync(`${root}dist/bundle/main.js`)) {
  if (!fresh)
    process.stderr.write(
      'crm-ferry: the build in dist/ is older than src/, and tsx (a development dependency) is missing: running the build\n',
    );
  ({ main } = await import('../dist/bundle/main.js'));
} else {
  process.stderr.write(
    'crm-ferry: dist/ is not built and tsx is missing: run `npm install` (which builds it), or `npm run build`\n',
  );
  process.exit(2);
}
process.exitCode = await main(process.argv.slice(2));
