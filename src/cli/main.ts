import { EXIT, exitCodeFor, FerryError, formatLocation } from '../errors/index.ts';
import { printable, printableLines } from '../util/index.ts';
import type { CliIo } from './command.ts';

/** Reports an error the way a person can act on it. Exit codes are decided in errors/exit-codes.ts. */
export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof FerryError) {
    // Messages quote input (file and column names, values, a parser's words about a file): its
    // control characters are written as escapes, so each line stays one line of plain text.
    const where = printable(formatLocation(error.location));
    io.stderr.write(`error [${error.code}]${where ? ` at ${where}` : ''}: ${printableLines(error.message)}\n`);
    if (error.hint) io.stderr.write(`  ${printableLines(error.hint)}\n`);
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
    runCommandLine: main,
    ...partialIo,
  };
  // The first Ctrl-C asks the command to stop cleanly; a second one ends the process at once.
  // Stopped by SIGTERM, the interrupted exit code says so (143).
  let stoppedBy: NodeJS.Signals | null = null;
  const interrupted = (code: number): number =>
    code === EXIT.INTERRUPTED && stoppedBy === 'SIGTERM' ? EXIT.TERMINATED : code;
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
    // yargs reads the command line (parse.ts); the command's own code loads only when it runs.
    const { parseCommandLine } = await import('./parse.ts');
    // Help is wrapped to the terminal's width (undefined when stdout is not a terminal).
    const outcome = await parseCommandLine(argv, (io.stdout as { columns?: number }).columns);
    switch (outcome.kind) {
      case 'output':
        io.stdout.write(`${outcome.text}\n`);
        return EXIT.OK;
      case 'nothing':
        io.stdout.write(`${outcome.overview}\n`);
        return EXIT.INVALID_INPUT;
      case 'usage-error':
        io.stderr.write(
          `${printableLines(outcome.message)}\n${outcome.after.startsWith('Run ') ? '' : '\n'}${outcome.after}\n`,
        );
        return EXIT.INVALID_INPUT;
      case 'run':
        return interrupted(await outcome.command.run(outcome.args, io));
    }
  } catch (error) {
    // Interrupted while waiting (a login's browser step, a pause): not a bug, and nothing to show.
    if (io.signal.aborted && error instanceof Error && error.name === 'AbortError')
      return interrupted(EXIT.INTERRUPTED);
    return reportError(error, io);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
