import { FerryError } from '../../errors/index.ts';
/**
 * A filter the sandbox cannot run: malformed, naming an unknown field, or pairing an operator with
 * a field or value it does not fit. The filter route answers it with 400 and the message.
 */
export class FilterError extends FerryError {
  /**
   * @param path Where in the filter the problem is, e.g. `conditions[2].orGroup[0]` or
   *   `orderBy[1]`; null when the filter as a whole is wrong.
   * @param problem What was expected and what was found, without the path.
   */
  constructor(
    readonly path: string | null,
    readonly problem: string,
  ) {
    super('SANDBOX_REQUEST', path === null ? problem : `${path}: ${problem}`);
  }
}
