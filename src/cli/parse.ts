import { closest, distance } from 'fastest-levenshtein';
import type { Arguments, Argv } from 'yargs';
import type { Command, OptionDef, ParsedArgs } from './command.ts';
import { commandGroups, commands, type CommandEntry } from './commands.ts';
import { version } from './version.ts';

/**
 * What the command line asks for, once yargs has read it:
 * - `output`: help, the version or completions, printed to stdout (exit 0);
 * - `usage-error`: one line saying what is wrong (exit 2), then a pointer to the help;
 * - `run`: a command and its parsed flags;
 * - `nothing`: no command at all (the overview, exit 2).
 */
export type ParseOutcome =
  | { kind: 'output'; text: string }
  | { kind: 'usage-error'; message: string; after: string }
  | { kind: 'run'; command: Command; args: ParsedArgs }
  | { kind: 'nothing'; overview: string };

/** The key yargs answers completions on; the scripts of `crm-ferry completion` call it. */
export const COMPLETION_KEY = '--get-yargs-completions';

/**
 * How yargs-parser reads the words. Each command checks its own values (a port, a date, a
 * concurrency) and says what it takes, so the parser hands over the text as typed.
 */
const PARSER_CONFIGURATION = {
  // Options keep the names the commands declare (`state-dir`, not also `stateDir`).
  'camel-case-expansion': false,
  // `--no-browser` is an option of its own, not "browser: false".
  'boolean-negation': false,
  // `--port 0x50` or an id `0012` stays the text typed; `--port` says what it takes.
  'parse-numbers': false,
  'parse-positional-numbers': false,
  'dot-notation': false,
  'duplicate-arguments-array': true,
} as const;

/** The widest `--help` gets: longer lines are hard to read even on a wide terminal. */
const HELP_WIDTH = 100;

/** `help`, `version` and `-V` as words, as people type them. */
function normalise(argv: string[]): string[] {
  if (argv[0] === 'help') return [...argv.slice(1), '--help'];
  if (argv[0] === 'version' || (argv.length === 1 && argv[0] === '-V')) return ['--version'];
  return argv;
}

/**
 * The commands the words name. Only their code is loaded (for their options): every other
 * command is known by its name and summary alone, so that `--help` starts at once.
 */
async function loadNamed(words: string[]): Promise<Map<string, Command>> {
  const named = commands.filter((entry) => {
    const parts = entry.name.split(' ');
    return words.some((_, i) => parts.every((part, j) => words[i + j] === part));
  });
  const loaded = await Promise.all(named.map(async (entry) => [entry.name, await entry.load()] as const));
  return new Map(loaded);
}

/** `--port  <N> port to listen on`: the value's shape first, as in man pages. */
/** The option's line in --help: its value as <VALUE>, or [VALUE] when it may be left out. */
function describe(def: OptionDef): string {
  if (!def.value) return def.describe;
  return def.optionalValue ? `[${def.value}] ${def.describe}` : `<${def.value}> ${def.describe}`;
}

interface ParserState {
  /** The command (or group of commands) whose builder ran last: where an error happened. */
  context?: string;
  chosen?: { entry: CommandEntry; argv: Arguments };
}

/**
 * Joins the lines of each paragraph into one, so that yargs wraps it to the terminal's width
 * instead of breaking the lines written for 100 columns a second time (ragged at 80). The usage
 * line and indented lines (examples, a second usage line) stay lines of their own.
 */
export function reflow(text: string): string {
  const lines: string[] = [];
  for (const line of text.trimEnd().split('\n')) {
    const last = lines.at(-1);
    const joins =
      last !== undefined &&
      last !== '' &&
      line !== '' &&
      !/^\s/.test(last) &&
      !/^\s/.test(line) &&
      !last.startsWith('Usage:');
    if (joins) lines[lines.length - 1] = `${last} ${line}`;
    else lines.push(line);
  }
  return lines.join('\n');
}

function configure(y: Argv, command: Command): Argv {
  y.usage(reflow(command.usage));
  if (command.epilog) y.epilog(reflow(command.epilog));
  for (const [key, def] of Object.entries(command.options)) {
    y.option(key, {
      type: def.type,
      requiresArg: def.type === 'string' && !def.optionalValue,
      describe: describe(def),
      group: def.group ?? 'Options:',
    });
  }
  return y;
}

/** The command table as yargs commands: one word each, or a group word (`mapping`, `auth`) with its sub-commands. */
function addCommands(y: Argv, loaded: Map<string, Command>, state: ParserState): void {
  const leaf = (entry: CommandEntry, word: string, target: Argv): void => {
    target.command(
      word,
      entry.summary,
      (b) => {
        state.context = entry.name;
        const command = loaded.get(entry.name);
        return command ? configure(b, command) : b;
      },
      (argv) => {
        state.chosen = { entry, argv };
      },
    );
  };
  const groupsDone = new Set<string>();
  for (const entry of commands) {
    const [first, second] = entry.name.split(' ') as [string, string | undefined];
    if (second === undefined) {
      leaf(entry, first, y);
      continue;
    }
    if (groupsDone.has(first)) continue;
    groupsDone.add(first);
    const members = commands.filter((c) => c.name.startsWith(`${first} `));
    y.command(first, commandGroups[first] ?? '', (g) => {
      state.context = first;
      g.usage(`Usage: crm-ferry ${first} <command> [options]`);
      for (const member of members) leaf(member, member.name.split(' ')[1] as string, g);
      const names = members.map((m) => m.name.split(' ')[1] as string);
      return g.demandCommand(
        1,
        `crm-ferry ${first} needs a command: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`,
      );
    });
  }
}

/**
 * yargs formats the chosen command's whole help as it calls the command's handler, in case it is
 * shown later: here it never is (help is answered before a command is chosen), and formatting it
 * took a fiftieth of the CPU of a short `crm-ferry run`. Its usage object is reached through the
 * internal methods yargs gives its own parts; when a later yargs has neither, nothing changes.
 */
function skipHelpCache(y: Argv): void {
  const internal = y as Argv & {
    getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
  };
  const usage = internal.getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

async function buildParser(words: string[], state: ParserState, width?: number): Promise<Argv> {
  const { default: yargs } = await import('yargs/yargs');
  const loaded = await loadNamed(words);
  const y = yargs()
    .scriptName('crm-ferry')
    .parserConfiguration(PARSER_CONFIGURATION)
    .usage('Usage: crm-ferry <command> [options]')
    .epilog("Run 'crm-ferry <command> --help' for a command's options.")
    .strictOptions()
    .recommendCommands()
    .exitProcess(false)
    .showHelpOnFail(false)
    .version('version', 'print the version of crm-ferry', version())
    .alias('version', 'V')
    .help('help', 'show this help')
    .alias('help', 'h');
  // The value's shape (`<N>`) says more than yargs's [string]; usageConfiguration is newer than @types/yargs 17.0.
  (y as Argv & { usageConfiguration(config: { 'hide-types': boolean }): Argv }).usageConfiguration({
    'hide-types': true,
  });
  y.wrap(Math.min(HELP_WIDTH, width ?? HELP_WIDTH));
  addCommands(y, loaded, state);
  skipHelpCache(y);
  return y;
}

/** The flags yargs read, in the shape commands take: strings stay strings, repeatable ones are lists. */
function toParsedArgs(command: Command, entry: CommandEntry, argv: Arguments): ParsedArgs {
  const values: ParsedArgs['values'] = {};
  for (const [key, def] of Object.entries(command.options)) {
    const raw = argv[key] as unknown;
    if (raw === undefined) continue;
    const list = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    if (def.type === 'boolean') values[key] = list.at(-1) === true;
    else if (def.multiple) values[key] = list.map(String);
    else values[key] = String(list.at(-1));
  }
  return { values, positionals: argv._.slice(entry.name.split(' ').length).map(String) };
}

/**
 * A switch given a value other than true or false (`--dry-run=yes`, `--json=1`): yargs reads
 * that as false, so `import --dry-run=1` would write. Said instead, before anything runs.
 */
function booleanWithValue(command: Command, argv: string[]): string | undefined {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).find((word) => {
    const match = /^--([^=]+)=(.*)$/s.exec(word);
    return (
      match !== null &&
      command.options[match[1] as string]?.type === 'boolean' &&
      !['true', 'false'].includes(match[2] as string)
    );
  });
}

/**
 * The words of an unknown command as typed: the first word not an option, and the second in a
 * group (`auth logni`). Never more: the next word may be an option's value (`exprot --token T`).
 */
function commandWords(argv: string[], state: ParserState): string {
  const first = argv.findIndex((word) => !word.startsWith('-'));
  if (first < 0) return '';
  return argv.slice(first, state.context ? first + 2 : first + 1).join(' ');
}

/** The closest of `names` to `typed`, when it is close enough to be a typo. */
function nearest(typed: string, names: string[]): string | undefined {
  if (names.length === 0) return undefined;
  const best = closest(typed, names);
  return distance(typed, best) <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** yargs's failure messages, said the way a person can act on them, with the closest option named on the first line. */
function usageError(
  message: string,
  argv: string[],
  state: ParserState,
  loaded: Command | undefined,
  overview: string,
): ParseOutcome {
  const where = state.context ? `crm-ferry ${state.context}` : 'crm-ferry';
  const after = `Run '${where} --help' for its options.`;
  const unknown = /^Unknown arguments?: (.+)$/.exec(message);
  if (unknown) {
    const key = (unknown[1] as string).split(', ')[0] as string;
    // The option as typed, without its value: `--tokn=SECRET` must not print the secret.
    const typed =
      argv.find((word) => /^-{1,2}[^-]/.test(word) && word.replace(/^-+/, '').split('=')[0] === key)?.split('=')[0] ??
      `--${key}`;
    const best = nearest(key, [...Object.keys(loaded?.options ?? {}), 'help', 'version']);
    return {
      kind: 'usage-error',
      message: `${where}: unknown option ${typed}${best ? `; did you mean --${best}?` : ''}`,
      after,
    };
  }
  const missing = /^Not enough arguments following: (.+)$/.exec(message);
  if (missing) {
    // `--where '-x'`: yargs takes a word starting with '-' for an option; the `=` form is read as a value.
    const flag = `--${missing[1]}`;
    const next = argv[argv.indexOf(flag) + 1];
    const dashed =
      next !== undefined && next.startsWith('-') && next !== '--'
        ? `; for a value starting with '-', write ${flag}=${next}`
        : '';
    return { kind: 'usage-error', message: `${where}: ${flag} needs a value${dashed}`, after };
  }
  const recommended = /^Did you mean (.+)\?$/.exec(message);
  if (recommended) {
    const meant = state.context ? `${state.context} ${recommended[1]}` : recommended[1];
    return {
      kind: 'usage-error',
      message: `unknown command: ${commandWords(argv, state)}; did you mean \`crm-ferry ${meant}\`?`,
      after: overview,
    };
  }
  return { kind: 'usage-error', message: message.startsWith('crm-ferry') ? message : `${where}: ${message}`, after };
}

async function parseWith(y: Argv, argv: string[]): Promise<{ error: Error | null; output: string }> {
  return new Promise((resolve) => {
    y.parse(argv, {}, (error, _argv, output) => resolve({ error: error ?? null, output }));
  });
}

/**
 * Completions for the words typed so far (the scripts pass them after the key, the program's
 * name first). yargs answers them only through a parse without a callback, and then prints with
 * console.log, so the answer is collected from there for the length of this call.
 */
async function complete(rawArgv: string[]): Promise<string> {
  const typed = rawArgv.slice(2);
  const current = typed.at(-1) ?? '';
  const previous = typed.at(-2) ?? '';
  // The value of an option (`--out <TAB>`) is up to the shell (file names): nothing from here.
  if (previous.startsWith('--') && !previous.includes('=')) {
    const loaded = await loadNamed(typed);
    const name = previous.slice(2);
    if ([...loaded.values()].some((command) => command.options[name]?.type === 'string')) return '';
  }
  const y = await buildParser(typed, {});
  const lines: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => lines.push(parts.join(' '));
  try {
    await y.parseAsync(rawArgv);
  } finally {
    console.log = log;
  }
  // A word not starting with '-' is a command or a command's argument (a file): options only for '-'.
  return (current.startsWith('-') ? lines : lines.filter((line) => !line.startsWith('-'))).join('\n');
}

/**
 * Reads the command line with yargs: help, version, completions, usage errors, or the command to
 * run. `width` is the terminal's (help is wrapped to it, at most 100 columns).
 */
export async function parseCommandLine(rawArgv: string[], width?: number): Promise<ParseOutcome> {
  const state: ParserState = {};
  if (rawArgv[0] === COMPLETION_KEY) return { kind: 'output', text: await complete(rawArgv) };
  const argv = normalise(rawArgv);
  const overview = async (): Promise<string> => (await parseWith(await buildParser([], {}, width), ['--help'])).output;
  if (argv.length === 0) return { kind: 'nothing', overview: await overview() };
  const y = await buildParser(argv, state, width);
  const { error, output } = await parseWith(y, argv);
  const chosen = state.chosen;
  if (error) {
    const command = state.context ? await commands.find((c) => c.name === state.context)?.load() : undefined;
    return usageError(error.message, argv, state, command, await overview());
  }
  if (output !== '') {
    // yargs shows the overview for `nonsense --help` (and `help nonsense`): a word that names no
    // command is a mistake to say, not a help request to answer with exit 0.
    const word = commandWords(argv, state);
    const inGroup = state.context !== undefined && !commands.some((c) => c.name === state.context);
    if ((word !== '' && !state.context) || (inGroup && word.includes(' ') && !word.split(' ')[1]?.startsWith('-'))) {
      const names = inGroup
        ? commands.map((c) => c.name)
        : [...new Set(commands.map((c) => c.name.split(' ')[0] as string))];
      const meant = nearest(word, names);
      return {
        kind: 'usage-error',
        message: `unknown command: ${word}${meant ? `; did you mean \`crm-ferry ${meant}\`?` : ''}`,
        after: await overview(),
      };
    }
    return { kind: 'output', text: output };
  }
  if (!chosen) {
    return { kind: 'usage-error', message: `unknown command: ${commandWords(argv, state)}`, after: await overview() };
  }
  const command = (await chosen.entry.load()) as Command;
  const valued = booleanWithValue(command, argv);
  if (valued)
    return {
      kind: 'usage-error',
      message: `crm-ferry ${command.name}: ${valued.split('=')[0]} takes no value, got ${valued}; write ${valued.split('=')[0]} alone, or leave it out`,
      after: `Run 'crm-ferry ${command.name} --help' for its options.`,
    };
  return { kind: 'run', command, args: toParsedArgs(command, chosen.entry, chosen.argv) };
}
