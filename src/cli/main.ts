import { parseArgs } from 'node:util';
import { EXIT, exitCodeFor, FerryError, formatLocation } from '../errors/index.ts';
import type { CliIo, Command } from './command.ts';
import { commands } from './commands.ts';

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  // Longest match first, so `auth login` wins over a hypothetical `auth`.
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const command of sorted) {
    const words = command.name.split(' ');
    if (words.every((word, i) => argv[i] === word)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: crm-ferry <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun 'crm-ferry <command> --help' for a command's options.\n`;
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
  const onSignal = (): void => controller.abort();
  if (!partialIo.signal) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      io.stdout.write(overview());
      return argv.length === 0 ? EXIT.INVALID_INPUT : EXIT.OK;
    }
    const found = findCommand(argv);
    if (!found) {
      io.stderr.write(`unknown command: ${argv.join(' ')}\n\n${overview()}`);
      return EXIT.INVALID_INPUT;
    }
    const { command, rest } = found;
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout.write(`${command.usage.trimEnd()}\n`);
      return EXIT.OK;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
    } catch (error) {
      io.stderr.write(`${(error as Error).message}\n\n${command.usage.trimEnd()}\n`);
      return EXIT.INVALID_INPUT;
    }
    return await command.run(parsed as Parameters<Command['run']>[0], io);
  } catch (error) {
    return reportError(error, io);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
