import { join } from 'node:path';
import { RecordService } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { loadJournal } from '../journal/index.ts';
import { assertSameKey, openRun, WriteSlots } from '../load/index.ts';
import { type CompiledMapping } from '../mapping/index.ts';
import { linkedSteps } from '../plan/index.ts';
import { type Found, nameKey, verifyLinks, compareStep } from './compare.ts';
import { writeVerifyFiles } from './differences-file.ts';
import { requestsToRead, idCount, firstRunTime, readAdded, stepFor, nameOf } from './read-account.ts';
import {
  verifyOptionsSchema,
  type VerifyOptionsInput,
  type VerifyStepSummary,
  type VerifySummary,
  type VerifyDeps,
  type StepCheck,
} from './types.ts';

/**
 * Compares the account with the source of a migration: every step's input is read and mapped
 * again, and each row's record (found by the id the journal holds for it) is compared field by
 * field with what the row maps to, the way the importer's `--full` sees it (planUpdate: what the
 * account's record lacks of the row's body). Records a run created whose row has left the input
 * are extra. Nothing is written to the account; the differences go to a CSV file.
 */
export async function runVerify(input: VerifyOptionsInput, deps: VerifyDeps): Promise<VerifySummary> {
  const options = verifyOptionsSchema.parse(input);
  const started = Date.now();
  const requestsAtStart = deps.client.transport.requestsSent;
  const emit = deps.onEvent ?? (() => undefined);
  // Only the lists of names the mappings can hold: verify creates nothing. Every command that binds
  // a state makes the account's user check; verify only reads, and leaves the state as it was.
  const {
    steps: prepared,
    compiled,
    names,
    state,
  } = await openRun(
    {
      source: options.source,
      prepare: { live: { connection: deps.v1Live }, transforms: deps.transforms },
      state: {
        dir: options.stateDir,
        account: deps.account,
        existing: true,
        keepUsers: false,
        store: options.stateStore ?? undefined,
      },
    },
    { client: deps.client, resolver: deps.resolver },
  );
  const { resolver, requests: requestsForNames } = names;
  try {
    const checks: StepCheck[] = [];
    for (const [index, step] of prepared.entries()) {
      const journal = await loadJournal(state.journalFile(step.name));
      // Rows keyed otherwise than the run keyed them would find none of its records.
      assertSameKey(step, journal);
      const entity = (compiled[index] as CompiledMapping).entity;
      checks.push({
        prepared: step,
        entity,
        journal,
        written: idCount(journal),
        began: await firstRunTime(state.journalFile(step.name)),
        types: new Set(),
        aliases: new Map(),
      });
    }
    if (checks.every((check) => check.written === 0 && check.journal.lines === 0)) {
      throw new FerryError(
        'USAGE',
        `the state in ${state.dir} holds no run of ${prepared.map((s) => s.name).join(', ')}: nothing to verify`,
        {
          location: { file: state.dir },
          hint: 'Give the plan or mapping the run was made with, and the same --state-dir.',
        },
      );
    }
    const service = new RecordService(deps.client, deps.signal);
    const beforeAdded = deps.client.transport.requestsSent;
    const added = await readAdded(service, checks);
    const requestsForAdded = deps.client.transport.requestsSent - beforeAdded;
    const planned = checks.map((check) => ({
      step: check.prepared.name,
      records: check.written,
      requests: requestsToRead(check.entity, check.written),
    }));
    const plannedRequests = planned.reduce((sum, s) => sum + s.requests, 0);
    emit({ type: 'plan', steps: planned, requests: plannedRequests, requestsForNames, requestsForAdded });

    const limit = new WriteSlots(options.concurrency);

    const found: Found = { differences: [], notCarried: [], namedOrganisations: new Set() };
    const steps: VerifyStepSummary[] = [];
    const byName = new Map(checks.map((check) => [check.prepared.name, check]));
    const links = verifyLinks(byName);
    for (const [index, check] of checks.entries()) {
      steps.push(
        await compareStep(check, compiled[index] as CompiledMapping, {
          links,
          linked: linkedSteps(prepared),
          resolver,
          found,
          signal: deps.signal,
          service,
          limit,
        }),
      );
    }
    for (const [entity, records] of added.records) {
      for (const record of records) {
        // An organisation a person's plain-name link made the service create is the run's doing.
        if (
          entity === 'party' &&
          record.type === 'organisation' &&
          typeof record.name === 'string' &&
          found.namedOrganisations.has(nameKey(record.name))
        )
          continue;
        const check = stepFor(record, checks, entity);
        const counts = steps.find((s) => s.step === check?.prepared.name);
        if (!check || !counts) continue;
        counts.extra += 1;
        found.differences.push({
          step: check.prepared.name,
          kind: 'extra',
          changedIn: 'account',
          row: null,
          key: '',
          field: '',
          inFile: 'no row: not written by crm-ferry',
          inAccount: `${nameOf(record)} (record ${String(record.id)}), added to the account on ${String(record.createdAt)}`,
          id: record.id as number,
        });
      }
    }
    const differencesFile = options.differencesFile ?? join(state.dir, 'results', 'verify.differences.csv');
    const notCarriedFile = await writeVerifyFiles(differencesFile, found.differences, found.notCarried);
    const summary: VerifySummary = {
      stateDir: state.dir,
      steps,
      differences: found.differences,
      differencesFile,
      notCarried: found.notCarried,
      notCarriedFile,
      requests: deps.client.transport.requestsSent - requestsAtStart,
      requestsForNames,
      requestsForAdded,
      plannedRequests,
      notListed: [...added.cut].map(([entity, listed]) => ({ entity, listed })),
      elapsedMs: Date.now() - started,
      matches: found.differences.length === 0,
    };
    emit({ type: 'end', summary });
    return summary;
  } finally {
    await state.close();
  }
}
