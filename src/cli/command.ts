import { FerryError } from '../errors/index.ts';

/** What a command gets from the outside world. Library code never touches `process`; commands use this. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop cleanly when it fires. */
  signal: AbortSignal;
  /**
   * Runs another command line in this process, as `main` does (a worker's jobs). Handed in by
   * `main` itself: a command importing it would close a circle through the command table.
   */
  runCommandLine?: (argv: string[], io: Partial<CliIo>) => Promise<number>;
}

/** One option of a command, as the parser (yargs) takes it and `--help` shows it. */
export interface OptionDef {
  /** A string option always needs a value (`--out` alone is an error); a boolean takes none. */
  type: 'string' | 'boolean';
  /** Given more than once, every value is kept (an array). Otherwise the last one wins. @default false */
  multiple?: boolean;
  /** The shape of the value in `--help`, e.g. `N`, `FILE` or `N/h|N/min|N/s`. */
  value?: string;
  /** One sentence for `--help`: what it does, what it takes, its default. */
  describe: string;
  /** The heading `--help` lists the option under. @default "Options:" */
  group?: string;
  /** A string option that may also be given alone (its value is then ''). @default false */
  optionalValue?: boolean;
}

export type OptionSpec = Record<string, OptionDef>;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** One entry of the command table. */
export interface Command {
  /** Words that select the command, e.g. `sandbox` or `auth login`. */
  name: string;
  /** The usage line(s) and what the command does: the top of its `--help`. */
  usage: string;
  /** The end of its `--help`: exit codes, examples. */
  epilog?: string;
  options: OptionSpec;
  /** Parses nothing itself: gets parsed flags, builds an options object, calls the library. Returns the exit code. */
  run(args: ParsedArgs, io: CliIo): Promise<number>;
}

/**
 * Refuses words beyond the ones a command takes (`takes`, e.g. `['ENTITY']`): a stray word
 * (`sandbox 8080`, `export parties tasks`) is a mistake to say, not to ignore.
 */
export function refuseArguments(command: string, args: ParsedArgs, takes: string[] = []): void {
  const extra = args.positionals.slice(takes.length);
  if (extra.length === 0) return;
  const got = extra.map((p) => JSON.stringify(p)).join(' ');
  throw new FerryError(
    'USAGE',
    takes.length === 0
      ? `${command} takes no arguments, got ${got}`
      : `${command} takes ${takes.join(' ')} only, got also ${got}`,
    {
      hint: `Run 'crm-ferry ${command} --help' for its options.`,
    },
  );
}
