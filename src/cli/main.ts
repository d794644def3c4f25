import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { closest, distance } from 'fastest-levenshtein';
import { EXIT, exitCodeFor, FerryError, formatLocation } from '../errors/index.ts';
import type { CliIo, Command } from './command.ts';
import { commands, type CommandEntry } from './commands.ts';

function findCommand(argv: string[]): { entry: CommandEntry; rest: string[] } | undefined {
  // Longest match first, so `auth login` wins over a hypothetical `auth`.
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const entry of sorted) {
    const words = entry.name.split(' ');
    if (words.every((word, i) => argv[i] === word)) return { entry, rest: argv.slice(words.length) };
  }
  return undefined;
}

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: crm-ferry <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun 'crm-ferry <command> --help' for a command's options, 'crm-ferry --version' for the version.\n`;
}

/** The version in package.json, two folders up from this file whether it runs from src/ or dist/. */
function version(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** The command a mistyped one was probably meant to be, if any is close. */
function suggestCommand(argv: string[]): string | undefined {
  const typed = argv.slice(0, 2).join(' ');
  const names = commands.map((c) => c.name);
  const best = closest(typed, names);
  const firstWord = closest(argv[0] ?? '', [...new Set(names.map((n) => n.split(' ')[0] as string))]);
  if (distance(typed, best) <= Math.max(2, Math.floor(best.length / 3))) return best;
  if (distance(argv[0] ?? '', firstWord) <= 2) return firstWord;
  return undefined;
}

/** Node's parser messages, said the way a person can act on them, with the closest option named. */
function parseError(error: Error, command: Command): string {
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(error.message);
  if (unknown) {
    const typed = (unknown[1] as string).replace(/^-+/, '').split('=')[0] as string;
    const names = Object.keys(command.options);
    const best = names.length > 0 ? closest(typed, names) : undefined;
    const hint = best !== undefined && distance(typed, best) <= Math.max(2, Math.floor(best.length / 3)) ? `; did you mean --${best}?` : '';
    return `crm-ferry ${command.name}: unknown option ${unknown[1]}${hint}`;
  }
  const missing = /Option '(-{1,2}[^ ]+)[^']*' argument missing/.exec(error.message);
  if (missing) return `crm-ferry ${command.name}: ${missing[1]} needs a value`;
  const notString = /Option '(-{1,2}[^ ]+)[^']*' does not take an argument/.exec(error.message);
  if (notString) return `crm-ferry ${command.name}: ${notString[1]} takes no value`;
  return `crm-ferry ${command.name}: ${error.message}`;
}

/** Reports an error the way a person can act on it. Exit codes are decided in errors/exit-codes.ts. */
export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof FerryError) {
    const where = formatLocation(error.location);
    io.stderr.write(`error [${error.code}]${where ? ` at ${where}` : ''}: ${error.message}\n`);
    if (error.hint) io.stderr.write(`  ${error.hint}\n`);
  } else {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(
      `internal error: this is a bug in crm-ferry. Please report it with the command you ran and this text:\n${text}\n`,
    );
  }
  return exitCodeFor(error);
}

/**
 * Standard output closed early (`crm-ferry api /parties --paginate | head -1`) is a normal end;
 * any other failure to write it (a full disk) is one clear line. Only for the real process
 * streams: tests hand in their own.
 */
function guardStdout(io: CliIo): void {
  if (io.stdout !== process.stdout) return;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.OK);
    process.stderr.write(`error: cannot write to standard output: ${error.message}\n`);
    process.exit(EXIT.INVALID_INPUT);
  });
}

export async function main(argv: string[], partialIo: Partial<CliIo> = {}): Promise<number> {
  const controller = new AbortController();
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    ...partialIo,
  };
  // The first Ctrl-C asks the command to stop cleanly; a second one ends the process at once.
  // Stopped by SIGTERM, the interrupted exit code says so (143).
  let stoppedBy: NodeJS.Signals | null = null;
  const interrupted = (code: number): number => (code === EXIT.INTERRUPTED && stoppedBy === 'SIGTERM' ? EXIT.TERMINATED : code);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(interrupted(EXIT.INTERRUPTED));
    stoppedBy = signal;
    controller.abort();
  };
  if (!partialIo.signal) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  guardStdout(io);
  try {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      io.stdout.write(overview());
      return argv.length === 0 ? EXIT.INVALID_INPUT : EXIT.OK;
    }
    if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
      io.stdout.write(`${version()}\n`);
      return EXIT.OK;
    }
    const found = findCommand(argv);
    if (!found) {
      const suggestion = suggestCommand(argv);
      io.stderr.write(`unknown command: ${argv.slice(0, 2).join(' ')}${suggestion ? `; did you mean \`crm-ferry ${suggestion}\`?` : ''}\n\n${overview()}`);
      return EXIT.INVALID_INPUT;
    }
    const command = await found.entry.load();
    const { rest } = found;
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout.write(`${command.usage.trimEnd()}\n`);
      return EXIT.OK;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
    } catch (error) {
      io.stderr.write(`${parseError(error as Error, command)}\nRun 'crm-ferry ${command.name} --help' for its options.\n`);
      return EXIT.INVALID_INPUT;
    }
    return interrupted(await command.run(parsed as Parameters<Command['run']>[0], io));
  } catch (error) {
    // Interrupted while waiting (a login's browser step, a pause): not a bug, and nothing to show.
    if (io.signal.aborted && error instanceof Error && error.name === 'AbortError') return interrupted(EXIT.INTERRUPTED);
    return reportError(error, io);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
