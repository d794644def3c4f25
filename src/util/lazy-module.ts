import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A dependency loaded at its first use instead of at start-up, for those a run may never need
 * (libphonenumber-js, luxon, iconv-lite): `lazyModule<typeof X>('x')()` loads it on the first call
 * and hands back the same module after. The command line's bundle leaves a require made by
 * createRequire to run time (esbuild bundles only the `require` it knows), so the module is read
 * from node_modules when it is first asked for.
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: { module: T } | undefined;
  return () => {
    loaded ??= { module: require(name) as T };
    return loaded.module;
  };
}
