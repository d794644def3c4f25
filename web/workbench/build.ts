/**
 * Builds the workbench's page into dist/workbench/page/: one script (the page and preact, bundled
 * and minified by esbuild), its style sheet, index.html and the icon. Run by `npm run build`
 * (so by `npm ci`), after the page's type check (`tsc -p web/workbench`); esbuild itself checks
 * no types. Usage: `tsx web/workbench/build.ts [OUT_DIR]`.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = fileURLToPath(new URL('./', import.meta.url));
export const DEFAULT_OUT = fileURLToPath(new URL('../../dist/workbench/page/', import.meta.url));

/** Builds the page into `out`; returns the bytes of the script and the style sheet. */
export async function buildPage(out: string = DEFAULT_OUT): Promise<{ script: number; style: number }> {
  await mkdir(out, { recursive: true });
  const result = await build({
    entryPoints: { app: `${HERE}main.tsx` },
    outdir: out,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  await copyFile(`${HERE}app.css`, `${out}app.css`);
  await copyFile(`${HERE}index.html`, `${out}index.html`);
  await copyFile(`${HERE}icon.svg`, `${out}icon.svg`);
  const outputs = Object.entries(result.metafile.outputs);
  const script = outputs.find(([name]) => name.endsWith('app.js'))?.[1].bytes ?? 0;
  const { stat } = await import('node:fs/promises');
  return { script, style: (await stat(`${out}app.css`)).size };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = await buildPage(process.argv[2] ?? DEFAULT_OUT);
  process.stdout.write(
    `workbench page: app.js ${(sizes.script / 1024).toFixed(1)} KiB, app.css ${(sizes.style / 1024).toFixed(1)} KiB\n`,
  );
}
