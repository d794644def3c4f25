/**
 * Bundles the command line into dist/bundle/: src/cli/main.ts and everything it imports, the
 * dependencies included, as a few ES modules (one a command, and the parts they share), which
 * bin/crm-ferry.js runs. Node loads a file of 2 MB far faster than 500 modules of a few kB: the
 * loading was most of the CPU a short `crm-ferry run` took (docs/benchmarks.md, `import-cpu`).
 * The library (dist/index.js and its declarations) is tsc's output as before; this bundle is only
 * the command line's.
 *
 * undici is left outside the bundle: the client takes its Pool and request() from undici's own
 * files through createRequire (src/client/undici-pool.ts), and OAuth imports its door; a second,
 * bundled copy would be another Pool class than the one those files give.
 *
 * Every path the code resolves from its own file (`new URL('../../mappings/', import.meta.url)`)
 * stays right because the bundle sits two folders down, as tsc's dist/<room>/<file>.js do. yargs
 * reads its messages in the user's language from `../locales` beside its own folder: they are
 * copied to dist/locales/, the same place seen from dist/bundle/.
 *
 * Run by `npm run build`. Usage: `tsx build/bundle-cli.ts [OUT_DIR]`.
 */
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEFAULT_OUT = `${ROOT}dist/bundle/`;

/** Dependencies loaded from node_modules at run time, not bundled (see above). */
export const EXTERNAL = ['undici', 'undici/*'];

/** Bundles the command line into `out`; returns the files written and their bytes. */
export async function bundleCli(out: string = DEFAULT_OUT): Promise<Array<{ file: string; bytes: number }>> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS dependencies bundled into ES modules still call require() for node's own modules,
    // and read __dirname (yargs, for its locales).
    banner: {
      js: "import { createRequire as __ferryCreateRequire } from 'node:module'; import { dirname as __ferryDirname } from 'node:path'; import { fileURLToPath as __ferryPath } from 'node:url'; const require = __ferryCreateRequire(import.meta.url); const __filename = __ferryPath(import.meta.url); const __dirname = __ferryDirname(__filename);",
    },
    chunkNames: 'chunk-[hash]',
    // Whitespace and syntax only: names stay, so a stack trace in a bug report still says where.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  cpSync(`${ROOT}node_modules/yargs/locales`, `${out}../locales`, { recursive: true });
  return Object.entries(result.metafile.outputs).map(([file, { bytes }]) => ({ file, bytes }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await bundleCli(process.argv[2] ?? DEFAULT_OUT);
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  process.stdout.write(`command line: ${files.length} files, ${(total / 1024).toFixed(0)} KiB\n`);
}
