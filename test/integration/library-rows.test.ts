import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createFerry, FerryError, type Mapping, transformRegistry } from '../../src/index.ts';
import { customerNumber } from '../helpers/customer-number.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/** The mapping as a value, built in code: no file. */
const MAPPING = {
  version: 1,
  entity: 'party',
  key: '{{id}}',
  fields: [
    { to: 'type', value: 'person' },
    { to: 'firstName', value: { column: 'first' } },
    { to: 'lastName', value: { column: 'last' } },
    { to: 'about', value: { column: 'number', transform: [{ customerNumber: 'K-' }] } },
  ],
} as unknown as Mapping;

/** Rows from another system's API, read again each time they are asked for. */
let people: Array<Record<string, unknown>> = [
  { id: 17, first: 'Ada', last: 'Lovelace', number: '17' },
  { id: 4711, first: 'Alan', last: 'Turing', number: 4711 },
  { id: 'x', first: 'Grace', last: 'Hopper', number: 'none' },
];
async function* fromApi(): AsyncGenerator<Record<string, unknown>> {
  for (const person of people) yield person;
}

let box: TestSandbox;
let dir: string;

beforeAll(async () => {
  box = await startTestSandbox();
  dir = mkdtempSync(join(tmpdir(), 'ferry-rows-'));
});

afterAll(async () => {
  await box?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rows from anywhere: a source of rows, a mapping value and a transform bound once', () => {
  it('imports, verifies and re-runs rows no file holds, found again by their key', async () => {
    const { client } = await connect({ token: box.token, baseUrl: box.url });
    try {
      const ferry = createFerry({ client, transforms: transformRegistry([customerNumber]) });
      const options = {
        source: { kind: 'rows' as const, name: 'crm-api', mapping: MAPPING, read: fromApi },
        stateDir: join(dir, 'state'),
      };
      const first = await ferry.runImport(options);
      expect(first.steps[0]).toMatchObject({ step: 'crm-api', rowsRead: 3, created: 2, rejected: 1 });
      expect(first.steps[0]?.reasons[0]?.example).toBe('number "none": no digits in "none"');
      const abouts = (await allPages(box, '/parties', 'parties')).map((p) => p.about).sort();
      expect(abouts).toEqual(['K-000017', 'K-004711']);

      const checked = await ferry.runVerify(options);
      expect(checked.matches).toBe(true);
      expect(checked.steps[0]).toMatchObject({ rows: 3, carried: 2, rejected: 1 });

      // The rows again, one changed and one fixed: found by their keys, not created twice.
      people = people.map((p) => (p.id === 17 ? { ...p, last: 'King' } : p.id === 'x' ? { ...p, number: '1906' } : p));
      const again = await ferry.runImport(options);
      expect(again.steps[0]).toMatchObject({ created: 1, updated: 1, unchanged: 1, rejected: 0 });
      expect((await allPages(box, '/parties', 'parties')).map((p) => p.lastName).sort()).toEqual([
        'Hopper',
        'King',
        'Turing',
      ]);
    } finally {
      await client.close();
    }
  });

  it('a row that is not an object is rejected like a broken line of a file, and the others go on', async () => {
    const { client } = await connect({ token: box.token, baseUrl: box.url });
    try {
      const read = async function* (): AsyncGenerator<Record<string, unknown>> {
        yield { id: 'a', first: 'Ann', last: 'Arbor', number: '1' };
        yield 'not a row' as unknown as Record<string, unknown>;
      };
      const summary = await createFerry({ client, transforms: transformRegistry([customerNumber]) }).runImport({
        source: { kind: 'rows', name: 'odd', mapping: MAPPING, read },
        stateDir: join(dir, 'odd'),
      });
      expect(summary.steps[0]).toMatchObject({ created: 1, rejected: 1 });
    } finally {
      await client.close();
    }
  });

  it('a run stopped part-way throws its FerryError with the summary so far, and the same call goes on from it', async () => {
    const { client } = await connect({ token: box.token, baseUrl: box.url });
    try {
      let broken = true;
      const read = async function* (): AsyncGenerator<Record<string, unknown>> {
        yield { id: 'p1', first: 'Pat', last: 'One', number: '1' };
        if (broken) throw new FerryError('SOURCE_UNREADABLE', 'the API answered 502 on its second page');
        yield { id: 'p2', first: 'Pat', last: 'Two', number: '2' };
      };
      const ferry = createFerry({ client, transforms: transformRegistry([customerNumber]) });
      const options = {
        source: { kind: 'rows' as const, name: 'paged', mapping: MAPPING, read },
        stateDir: join(dir, 'paged'),
      };
      const error = await ferry.runImport(options).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FerryError);
      expect(error).toMatchObject({ code: 'SOURCE_UNREADABLE', message: 'the API answered 502 on its second page' });
      expect((error as FerryError).partial).toMatchObject({ steps: [{ step: 'paged', rowsRead: 1 }] });
      broken = false;
      const resumed = await ferry.runImport(options);
      expect(resumed.steps[0]).toMatchObject({ rowsRead: 2, created: 1, unchanged: 1 });
    } finally {
      await client.close();
    }
  });

  it('a source without a way to read its rows is an input error naming the option', async () => {
    const { client } = await connect({ token: box.token, baseUrl: box.url });
    try {
      const refused = await createFerry({ client })
        .runImport({
          source: { kind: 'rows', name: 'api', mapping: MAPPING, read: [] as never },
          stateDir: join(dir, 'none'),
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(FerryError);
      expect(refused).toMatchObject({ kind: 'input', message: expect.stringContaining('source.read') });
    } finally {
      await client.close();
    }
  });
});
