import { realpathSync } from 'node:fs';
import { basename, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the plans and mappings crm-ferry ships (beside src/ and dist/). */
export const BUNDLED_MAPPINGS_DIR = fileURLToPath(new URL('../../mappings/', import.meta.url));

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether a plan or mapping file is one crm-ferry ships: inside its own `mappings/` folder. */
export function isBundledFile(file: string, bundled = BUNDLED_MAPPINGS_DIR): boolean {
  const inside = relative(real(bundled), real(file));
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
}

/**
 * The state folder a run keeps unless told (`--state-dir`): `.crm-ferry` beside the plan or
 * mapping. A ready-made plan or mapping is part of crm-ferry itself, so its state is not kept in
 * crm-ferry's own folder (another account's runs and the test suite would meet it there, and an
 * installed package's folder may not be writable): it goes to `.crm-ferry/<name>` in the current
 * folder, one per ready-made file (`.crm-ferry/generic` for `mappings/plans/generic.yaml`).
 */
export function defaultStateDir(file: string, cwd: string, bundled = BUNDLED_MAPPINGS_DIR): string {
  if (isBundledFile(file, bundled)) return join(cwd, '.crm-ferry', basename(file, extname(file)));
  return join(resolve(file, '..'), '.crm-ferry');
}

/**
 * Where `validate --plan` writes a ready-made plan's rejects and warnings files unless told
 * (`--rejects-dir`): `validate/` in the plan's state folder (defaultStateDir), for the reason the
 * state is not kept in crm-ferry's own folder. Undefined for any other plan: its own folder.
 */
export function bundledValidateDir(planFile: string, cwd: string, bundled = BUNDLED_MAPPINGS_DIR): string | undefined {
  return isBundledFile(planFile, bundled) ? join(defaultStateDir(planFile, cwd, bundled), 'validate') : undefined;
}
