import { afterAll, beforeAll, it } from 'vitest';
import { type TestDatabase, testDatabase } from './postgres.ts';

/**
 * For a test file: a database of its own (made before its tests, dropped after them), and
 * `withPostgres`, which runs a test with the database's address, or skips it saying why when no
 * PostgreSQL can be had.
 */
export function postgresTests(): {
  withPostgres(name: string, test: (url: string) => Promise<void>, timeout?: number): void;
} {
  let database: TestDatabase | null = null;
  let skipped = '';
  beforeAll(async () => {
    const found = await testDatabase();
    if ('why' in found) skipped = found.why;
    else database = found;
  }, 120_000);
  afterAll(async () => {
    await database?.drop();
  });
  return {
    withPostgres(name, test, timeout = 60_000) {
      it(
        name,
        async (context) => {
          if (database === null) {
            context.skip(`no PostgreSQL: ${skipped}`);
            return;
          }
          await test(database.url);
        },
        timeout,
      );
    },
  };
}
