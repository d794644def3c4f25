import type { ParseArgsConfig } from 'node:util';

/** What a command gets from the outside world. Library code never touches `process`; commands use this. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop cleanly when it fires. */
  signal: AbortSignal;
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** One entry of the command table. */
export interface Command {
  /** Words that select the command, e.g. `sandbox` or `auth login`. */
  name: string;
  /** Usage line and option help, printed by `--help`. */
  usage: string;
  options: OptionSpec;
  /** Parses nothing itself: gets parsed flags, builds an options object, calls the library. Returns the exit code. */
  run(args: ParsedArgs, io: CliIo): Promise<number>;
}
