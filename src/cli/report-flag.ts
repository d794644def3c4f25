import { isAbsolute, relative, resolve } from 'node:path';
import type { CrmClient } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { isV1LiveInput } from '../util/index.ts';
import type { ReportInput, UsageRecorder } from '../report/index.ts';
import type { OptionSpec, ParsedArgs } from './command.ts';

/** `--report FILE.html`, for the commands that write a report (run, import, verify, rollback). */
export const reportFlag: OptionSpec = {
  report: {
    type: 'string',
    value: 'FILE.html',
    describe:
      'also write a self-contained HTML report of the run (counts, reasons, requests over time), for the customer',
  },
};

/** The report's path, resolved against the folder the command runs in; undefined without --report. */
export function reportPath(args: ParsedArgs, cwd: string): string | undefined {
  const value = args.values.report;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new FerryError('USAGE', '--report needs a file name, e.g. --report migration.html');
  if (!/\.html?$/i.test(value))
    throw new FerryError(
      'USAGE',
      `--report writes an HTML page: give a name ending in .html, got ${JSON.stringify(value)}`,
    );
  return isAbsolute(value) ? value : resolve(cwd, value);
}

/**
 * A path as the person reads it: relative to where the command runs, when under it. A live v1
 * input (`v1+https://HOST`) is an address, shown as given.
 */
export function shownPath(path: string, cwd: string): string {
  if (isV1LiveInput(path)) return path;
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** A path relative to where the command ran, however far up it goes (a live v1 address as it is). */
export function relativePath(path: string, cwd: string): string {
  if (isV1LiveInput(path)) return path;
  return relative(cwd, path) || '.';
}

/** Starts sampling the client's requests and quota for the report's chart. */
export async function recordUsage(client: CrmClient): Promise<UsageRecorder> {
  const { UsageRecorder } = await import('../report/index.ts');
  return new UsageRecorder({
    requests: () => client.transport.requestsSent,
    quota: () => {
      const state = client.transport.governor.state();
      return { remaining: state.remaining, limit: state.limitPerHour };
    },
  }).start();
}

/** Renders and writes the report; says where it went on `stderr`. */
export async function writeCommandReport(
  file: string,
  input: ReportInput,
  stderr: NodeJS.WritableStream,
  cwd: string,
): Promise<void> {
  const { renderReport, writeReport } = await import('../report/index.ts');
  await writeReport(file, renderReport(input));
  stderr.write(`Report: ${shownPath(file, cwd)}\n`);
}
