/**
 * A sandbox in a process of its own, for tests that kill it: `node --import tsx sandbox-child.ts
 * DATA_FILE TOKEN` prints its address on the first line of stdout and runs until killed.
 */
import { startSandbox } from '../../src/sandbox/index.ts';

const [file, token] = process.argv.slice(2);
if (!file || !token) throw new Error('usage: sandbox-child.ts DATA_FILE TOKEN');
const sandbox = await startSandbox({ dataFile: file, tokens: [token], port: 0, host: '127.0.0.1', scheduledDeletes: false });
process.stdout.write(`${sandbox.url}\n`);
const stop = (): void => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
