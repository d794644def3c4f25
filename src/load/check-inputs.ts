import { FerryError } from '../errors/index.ts';
import { type PreparedStep, readsLive } from '../plan/index.ts';
import { statSource } from '../sources/index.ts';

/**
 * Every step's input file is there and readable. Checked before the account is asked anything
 * and before the state folder is made: exit 2 says nothing was done, and a missing file is what
 * needs saying, not a state another account left in the folder. A live legacy input is read from
 * its account, so it is checked when it is read.
 */
export async function checkStepInputs(steps: readonly PreparedStep[]): Promise<void> {
  for (const step of steps) {
    if (readsLive(step)) continue;
    try {
      await statSource(step.inputFile);
    } catch (error) {
      if (!(error instanceof FerryError) || step.name === '') throw error;
      throw new FerryError(error.code, `step ${step.name}: ${error.message}`, { location: error.location, hint: error.hint, cause: error });
    }
  }
}
