/**
 * Bundles the command line into dist/bundle/: src/cli/main.ts and everything it imports, the
 * dependencies included, as a few ES modules (one a command, and the parts they share), which
 * bin/crm-ferry.js runs. Node loads a file of 2 MB far faster than 500 modules of a few kB: the
 * loading was most of the CPU a short `crm-ferry run` took (docs/benchmarks.md, `import-cpu`).
 * The library (dist/index.js and its declarations) is tsc's output as before; this bundle is only
 * the command line's.
 *
 * The client takes undici's Pool and request() from undici's own files with a require() made by
 * createRequire (src/client/undici-pool.ts), which esbuild leaves to run time: here that file is
 * read with a plain require() instead, so that those files are bundled. undici's door, which
 * OAuth imports with import() for its request(), stays outside: esbuild gives a CommonJS module
 * imported with import() only a default export, where node gives its named ones too (the bundle
 * is checked for such modules below). The door loads its own copy of undici's files, on a login
 * or a token's refresh only.
 *
 * Every path the code resolves from its own file (`new URL('../../mappings/', import.meta.url)`)
 * stays right because the bundle sits two folders down, as tsc's dist/<room>/<file>.js do. yargs
 * reads its messages in the user's language from `../locales` beside its own folder: they are
 * copied to dist/locales/, the same place seen from dist/bundle/.
 *
 * Run by `npm run build`. Usage: `tsx build/bundle-cli.ts [OUT_DIR]`.
 */
import { cpSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isBuiltin } from 'node:module';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEFAULT_OUT = `${ROOT}dist/bundle/`;

/**
 * Packages loaded from node_modules at run time (see above): the names alone, not their files
 * (esbuild's `external` would take `undici/lib/...` too).
 */
export const EXTERNAL = ['undici'];
const EXTERNAL_DOORS: Plugin = {
  name: 'external-doors',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${EXTERNAL.join('|')})$`) }, (args) => ({ path: args.path, external: true }));
  },
};

/** src/client/undici-pool.ts with undici's files required as esbuild bundles them (see above). */
const UNDICI_FILES: Plugin = {
  name: 'undici-files',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]client[\\/]undici-pool\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const made = 'const require = createRequire(import.meta.url);';
      if (!text.includes(made)) throw new Error(`${args.path} no longer has "${made}": see build/bundle-cli.ts`);
      return { contents: text.replace(made, ''), loader: 'ts' };
    });
  },
};

/**
 * zod's messages in English only. zod exports every language it has (`z.locales`, half of its
 * code: 290 kB of the 580 kB every command loaded and compiled), and uses English unless told
 * otherwise; crm-ferry writes its own messages and never picks another.
 */
const ZOD_ENGLISH_ONLY: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)) return undefined;
      return {
        path: fileURLToPath(new URL('../locales/en.js', `file://${args.importer}`)),
        namespace: 'zod-english-only',
      };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      loader: 'js',
      resolveDir: ROOT,
    }));
  },
};

/** What the command line's and the library's bundles share. */
const BUNDLE_SETTINGS = {
  absWorkingDir: ROOT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
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
} as const satisfies BuildOptions;

/** Bundles the command line into `out`; returns the files written and their bytes. */
export async function bundleCli(out: string = DEFAULT_OUT): Promise<Array<{ file: string; bytes: number }>> {
  // Chunks are named by their content: those of an earlier build would stay beside the new ones.
  rmSync(out, { recursive: true, force: true });
  const result = await build({
    ...BUNDLE_SETTINGS,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir: out,
    plugins: [EXTERNAL_DOORS, UNDICI_FILES, ZOD_ENGLISH_ONLY],
  });
  checkRuntimePackages(result.metafile);
  // A CommonJS module reached by import() becomes a chunk with a default export only: code that
  // takes a named export from it gets undefined (it did for OAuth's request()).
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (
      output.entryPoint &&
      output.exports.join() === 'default' &&
      /export default require_\w+\(\);\s*$/.test(await readFile(`${ROOT}${file}`, 'utf8'))
    ) {
      throw new Error(
        `${output.entryPoint} is a CommonJS module reached by import(): add its package to EXTERNAL in build/bundle-cli.ts`,
      );
    }
  }
  cpSync(`${ROOT}node_modules/yargs/locales`, `${out}../locales`, { recursive: true });
  return Object.entries(result.metafile.outputs).map(([file, { bytes }]) => ({ file, bytes }));
}

export const LIBRARY_OUT = `${ROOT}dist/lib/`;

/**
 * Bundles the library's doors (`crm-ferry`: src/index.ts, `crm-ferry/sandbox`:
 * src/sandbox-door.ts) into dist/lib/, as the command line is: node loads the few files far faster
 * than the 600 modules the sources and their dependencies are, and importing the library took 5
 * times a bare node's start (docs/benchmarks.md, `library-import`). The two doors share their
 * common code as chunks, so a FerryError of one is a FerryError of the other. zod is inside too
 * (English only, as for the command line): loading its 95 modules from node_modules was a fifth of
 * the import. A program's own schemas (a transform's options) come from its own zod, the peer
 * dependency the declarations name; crm-ferry only calls their safeParse() and reads the issues,
 * which any zod 4 gives alike. The declarations stay tsc's (dist/index.d.ts, dist/sandbox-door.d.ts).
 */
export async function bundleLibrary(out: string = LIBRARY_OUT): Promise<Array<{ file: string; bytes: number }>> {
  rmSync(out, { recursive: true, force: true });
  const result = await build({
    ...BUNDLE_SETTINGS,
    entryPoints: { index: 'src/index.ts', sandbox: 'src/sandbox-door.ts' },
    outdir: out,
    plugins: [EXTERNAL_DOORS, UNDICI_FILES, ZOD_ENGLISH_ONLY],
  });
  checkRuntimePackages(result.metafile);
  return Object.entries(result.metafile.outputs).map(([file, { bytes }]) => ({ file, bytes }));
}

/**
 * Packages the bundles still load from node_modules: those left outside (EXTERNAL) and those
 * lazyModule() requires at run time (src/util/lazy-module.ts). Everything else is inside the
 * bundles, so package.json lists only these for a program that installs crm-ferry, with yaml and
 * zod (a peer) whose types the declarations name; the rest are development dependencies.
 */
export const RUNTIME_PACKAGES = ['undici', 'luxon', 'libphonenumber-js', 'iconv-lite'];

/** Fails the build when a bundle imports a package that is not in RUNTIME_PACKAGES. */
function checkRuntimePackages(metafile: Metafile): void {
  const outside = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) {
      if (imported.external && !imported.path.startsWith('node:') && !imported.path.startsWith('.'))
        outside.add(
          imported.path
            .split('/')
            .slice(0, imported.path.startsWith('@') ? 2 : 1)
            .join('/'),
        );
    }
  }
  const unlisted = [...outside].filter((name) => !RUNTIME_PACKAGES.includes(name) && !isBuiltin(name));
  if (unlisted.length > 0)
    throw new Error(
      `the bundles load ${unlisted.join(', ')} from node_modules: add them to RUNTIME_PACKAGES and package.json dependencies (build/bundle-cli.ts)`,
    );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await bundleCli(process.argv[2] ?? DEFAULT_OUT);
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  process.stdout.write(`command line: ${files.length} files, ${(total / 1024).toFixed(0)} KiB\n`);
  if (process.argv[2] === undefined) {
    const library = await bundleLibrary();
    process.stdout.write(
      `library: ${library.length} files, ${(library.reduce((sum, f) => sum + f.bytes, 0) / 1024).toFixed(0)} KiB\n`,
    );
  }
}
