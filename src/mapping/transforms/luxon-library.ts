/**
 * luxon, loaded when a date or timestamp transform is first compiled: a run whose mappings read no
 * dates does not load it (its module builds its parsing expressions as it loads, 10-15 ms of CPU
 * at every start).
 */
import type * as Luxon from 'luxon';
import { lazyModule } from '../../util/index.ts';

export const luxon = lazyModule<typeof Luxon>('luxon');
