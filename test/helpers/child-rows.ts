import type { ImportEvent } from '../../src/load/index.ts';

/**
 * The onEvent of an import run in a child process that a test kills: prints `writing` once, at
 * the first row written, so that the parent kills within the writes, not the start-up.
 */
export function announceFirstRow(): (event: ImportEvent) => void {
  let told = false;
  return (event) => {
    if (event.type === 'row' && !told) {
      told = true;
      process.stdout.write('writing\n');
    }
  };
}
