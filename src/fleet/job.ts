/**
 * A job of the worker queue: what it holds (a command, its arguments, the service's address and
 * the NAME of the credentials, never the credentials), how a worker turns it into a command line
 * and an environment of its own, and what a command's exit code means for the job.
 *
 * A job's data is read back from the database, where anyone with access to the store could have
 * written it: it is checked again, by the same function, before a worker runs it.
 */
import { EXIT, FerryError } from '../errors/index.ts';
import { checkBaseUrl } from '../util/index.ts';

/** The commands a job may run: the ones that write to (or read all of) an account, unattended. */
export const JOB_COMMANDS = ['run', 'import', 'export', 'backup'] as const;
export type JobCommand = (typeof JOB_COMMANDS)[number];

/** What a job holds: stored as it is in the queue's table, so nothing secret. */
export interface JobSpec {
  /** The command the worker runs. */
  command: JobCommand;
  /** Its arguments as typed after the command (`plan.yaml --state-key acme`), read in the worker's folder. */
  args: string[];
  /** The service's address (`--base-url`); else the worker's CRM_FERRY_BASE_URL. */
  baseUrl?: string;
  /** The stored OAuth login the worker uses (`--profile`), from the worker's own login store. */
  profile?: string;
  /** The environment variable of the worker that holds the token (`--token-env`). */
  tokenEnv?: string;
}

/**
 * Options a job's arguments may not carry: a token would be stored in the database, and the
 * address, login and store are the job's own fields (or the worker's), said once.
 */
const REFUSED_ARGUMENTS: Record<string, string> = {
  token: 'a token in a job would be stored in the database: name the variable that holds it with --token-env VAR',
  'base-url': "give the service's address as the job's own --base-url (before --)",
  profile: "name the login as the job's own --profile (before --)",
  'state-store': 'the worker adds its own --state-store',
};

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const PROFILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function invalid(message: string, hint: string): FerryError {
  return new FerryError('USAGE', message, { hint });
}

/** A job as given (by `enqueue`, or read back from the queue), checked: or a USAGE error saying what is wrong. */
export function checkJobSpec(given: unknown): JobSpec {
  if (typeof given !== 'object' || given === null) throw invalid('a job is not an object', 'Enqueue it again.');
  const raw = given as Record<string, unknown>;
  const command = raw.command;
  if (typeof command !== 'string' || !(JOB_COMMANDS as readonly string[]).includes(command))
    throw invalid(
      `a job runs ${JOB_COMMANDS.join(', ')}; got ${JSON.stringify(command ?? null)}`,
      'Write the command after --: crm-ferry enqueue [options] -- run PLAN.',
    );
  const args = raw.args ?? [];
  if (!Array.isArray(args) || !args.every((arg): arg is string => typeof arg === 'string'))
    throw invalid("a job's arguments are not a list of words", 'Enqueue it again.');
  for (const arg of args) {
    const flag = /^--([a-z-]+)(=|$)/.exec(arg)?.[1];
    const why = flag === undefined ? undefined : REFUSED_ARGUMENTS[flag];
    if (why !== undefined) throw invalid(`a job's arguments may not hold --${flag}`, `${why}.`);
  }
  const spec: JobSpec = { command: command as JobCommand, args: [...args] };
  if (raw.baseUrl !== undefined) {
    if (typeof raw.baseUrl !== 'string') throw invalid("a job's base address is not a text", 'Enqueue it again.');
    checkBaseUrl(raw.baseUrl);
    spec.baseUrl = raw.baseUrl;
  }
  if (raw.profile !== undefined) {
    if (typeof raw.profile !== 'string' || !PROFILE.test(raw.profile))
      throw invalid(
        `the profile ${JSON.stringify(raw.profile)} is not a login's name`,
        'Letters, digits, dots, underscores and hyphens.',
      );
    spec.profile = raw.profile;
  }
  if (raw.tokenEnv !== undefined) {
    if (typeof raw.tokenEnv !== 'string' || !VARIABLE.test(raw.tokenEnv))
      throw invalid(
        `--token-env takes the NAME of an environment variable, got ${JSON.stringify(raw.tokenEnv)}`,
        'Give the variable name (ACME_TOKEN), not its value: each worker reads the token from its own environment.',
      );
    spec.tokenEnv = raw.tokenEnv;
  }
  if (spec.profile !== undefined && spec.tokenEnv !== undefined)
    throw invalid('a job takes --profile or --token-env, not both', 'A token wins over a login: say which one.');
  return spec;
}

/** The job as a person reads it in the worker's lines and `enqueue --list`. */
export function describeJob(spec: JobSpec): string {
  const words = [spec.command, ...spec.args].map((word) => (/^[\w./:@=-]+$/.test(word) ? word : JSON.stringify(word)));
  const credentials = spec.tokenEnv
    ? ` (token from $${spec.tokenEnv})`
    : spec.profile
      ? ` (login ${spec.profile})`
      : '';
  return `${words.join(' ')}${credentials}`;
}

/** The command line a worker runs for a job: the job's words and the worker's state store. */
export function jobArguments(spec: JobSpec, stateStore: string): string[] {
  return [spec.command, ...spec.args, '--state-store', stateStore];
}

/**
 * The environment a job runs with: the worker's own, with the job's credentials resolved in it
 * (the variable it names becomes CRM_FERRY_TOKEN; a profile replaces any token of the worker's),
 * and its service address. The token, when there is one, is handed back too, so that what the job
 * prints can be kept free of it.
 */
export function jobEnvironment(
  spec: JobSpec,
  workerEnv: NodeJS.ProcessEnv,
): { env: NodeJS.ProcessEnv; secrets: string[] } {
  const env: NodeJS.ProcessEnv = { ...workerEnv };
  // The worker's store reaches the job as --state-store; the variable would say it twice.
  delete env.CRM_FERRY_STATE_STORE;
  if (spec.baseUrl !== undefined) env.CRM_FERRY_BASE_URL = spec.baseUrl;
  if (spec.tokenEnv !== undefined) {
    const token = workerEnv[spec.tokenEnv];
    if (token === undefined || token === '')
      throw new FerryError(
        'CONFIG_MISSING',
        `the job takes its token from $${spec.tokenEnv}, which this worker's environment does not set`,
        { hint: `Give every worker ${spec.tokenEnv} (a Kubernetes Secret, a CI secret), then retry the job.` },
      );
    env.CRM_FERRY_TOKEN = token;
    delete env.CRM_FERRY_PROFILE;
    return { env, secrets: [token] };
  }
  if (spec.profile !== undefined) {
    delete env.CRM_FERRY_TOKEN;
    env.CRM_FERRY_PROFILE = spec.profile;
  }
  const token = env.CRM_FERRY_TOKEN;
  return { env, secrets: token ? [token] : [] };
}

export type JobOutcome = 'completed' | 'completed-with-rejects' | 'interrupted' | 'failed';

/**
 * What a command's exit code means for its job: done; done with rejected rows (an import's rows a
 * person must look at, not a reason to run it again); interrupted (the worker is stopping: the job
 * goes back to the queue, to be resumed); or failed (retried, then dead-lettered).
 */
export function jobOutcome(command: JobCommand, exitCode: number): JobOutcome {
  if (exitCode === EXIT.OK) return 'completed';
  if (exitCode === EXIT.ROWS_REJECTED && (command === 'run' || command === 'import')) return 'completed-with-rejects';
  if (exitCode === EXIT.INTERRUPTED || exitCode === EXIT.TERMINATED) return 'interrupted';
  return 'failed';
}

/** `text` with every secret in it replaced by ***: what goes into the queue's table or the worker's output. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('***');
  return out;
}
