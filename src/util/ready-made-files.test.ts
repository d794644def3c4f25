import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLED_MAPPINGS_DIR, defaultStateDir, isBundledFile } from './ready-made-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-bundled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the default state folder (issue 26, item 9)', () => {
  it("of a ready-made plan or mapping is .crm-ferry/NAME in the current folder, never inside crm-ferry's mappings/", () => {
    const cwd = join(dir, 'work');
    expect(defaultStateDir(join(BUNDLED_MAPPINGS_DIR, 'plans/generic.yaml'), cwd)).toBe(
      join(cwd, '.crm-ferry', 'generic'),
    );
    expect(defaultStateDir(join(BUNDLED_MAPPINGS_DIR, 'v1-organisations.yaml'), cwd)).toBe(
      join(cwd, '.crm-ferry', 'v1-organisations'),
    );
    expect(isBundledFile(BUNDLED_MAPPINGS_DIR)).toBe(false);
  });

  it('of any other plan or mapping is .crm-ferry beside it, a copy of a ready-made plan included', () => {
    expect(defaultStateDir(join(dir, 'plans/mine.yaml'), '/elsewhere')).toBe(join(dir, 'plans', '.crm-ferry'));
    expect(defaultStateDir(join(dir, 'mappings/plans/generic.yaml'), '/elsewhere')).toBe(
      join(dir, 'mappings/plans', '.crm-ferry'),
    );
    // A folder named like it, beside it, is not it.
    expect(isBundledFile(`${BUNDLED_MAPPINGS_DIR.replace(/\/$/, '')}-old/plans/generic.yaml`)).toBe(false);
  });

  it('sees a ready-made file reached through a link as ready-made', () => {
    const bundled = join(dir, 'pkg/mappings');
    mkdirSync(join(bundled, 'plans'), { recursive: true });
    writeFileSync(join(bundled, 'plans/generic.yaml'), 'version: 1\n');
    symlinkSync(join(dir, 'pkg'), join(dir, 'linked'));
    expect(defaultStateDir(join(dir, 'linked/mappings/plans/generic.yaml'), '/cwd', bundled)).toBe(
      join('/cwd', '.crm-ferry', 'generic'),
    );
  });
});

describe("where validate writes a ready-made plan's rejects", () => {
  it('in validate/ of its state folder; for any other plan, nowhere decided here (its own folder)', async () => {
    const { bundledValidateDir } = await import('./ready-made-files.ts');
    expect(bundledValidateDir(join(BUNDLED_MAPPINGS_DIR, 'plans/generic.yaml'), '/cwd')).toBe(
      join('/cwd', '.crm-ferry', 'generic', 'validate'),
    );
    expect(bundledValidateDir(join(dir, 'plan.yaml'), '/cwd')).toBeUndefined();
  });
});
