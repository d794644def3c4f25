import { Writable } from 'node:stream';
import { withoutSecrets } from './job.ts';

/**
 * What a job prints, as the worker shows it: each line led by the job's tag (several jobs print
 * at once with --jobs N), without the job's token, and its error lines kept to say why it failed.
 */
export class JobOutput extends Writable {
  private partial = '';
  private readonly errors: string[] = [];

  constructor(
    private readonly target: NodeJS.WritableStream,
    private readonly tag: string,
    private readonly secrets: readonly string[],
  ) {
    super({ decodeStrings: false });
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line);
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.flush();
    done();
  }

  /** Writes what is left of a last line without its end. */
  flush(): void {
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
  }

  /**
   * The error the command reported (`error [CODE]: ...` and its hint), or its last lines: what
   * the job's failure says in the queue. Secrets are already out of it.
   */
  reason(): string {
    const start = this.errors.findLastIndex((line) => /^(error|internal error)\b/.test(line));
    const lines = start >= 0 ? this.errors.slice(start) : this.errors;
    return lines.slice(-6).join('\n').slice(0, 2000);
  }

  private line(raw: string): void {
    const line = withoutSecrets(raw.replace(/\r/g, ''), this.secrets);
    this.errors.push(line);
    if (this.errors.length > 50) this.errors.shift();
    this.target.write(`${this.tag} ${line}\n`);
  }
}
