import { z } from 'zod';
import { type CustomTransform, TransformError } from '../../src/index.ts';

/** A transform of one's own, as docs/library.md shows it: a customer number written as the prefix and six digits. */
export const customerNumber: CustomTransform<{ prefix: string }> = {
  name: 'customerNumber',
  options: z.object({ prefix: z.string().default('C-') }).strict(),
  shorthand: 'prefix',
  create:
    ({ prefix }) =>
    (value) => {
      const digits = String(value ?? '').replace(/\D/g, '');
      if (digits === '') throw new TransformError(`no digits in ${JSON.stringify(value)}`, 'customerNumber');
      return `${prefix}${digits.padStart(6, '0')}`;
    },
};
