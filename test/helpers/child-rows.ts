import type { ImportEvent } from '../../src/load/index.ts';

/**
 * The onEvent of an import run in a child process that a test kills: prints `writing` once, at
 * the first row written (of `step`, when given), so that the parent kills within the writes, not
 * the start-up.
 */
export function announceFirstRow(step?: string): (event: ImportEvent) => void {
  let told = false;
  return (event) => {
    if (event.type === 'row' && !told && (step === undefined || event.step === step)) {
      told = true;
      process.stdout.write('writing\n');
    }
  };
}
