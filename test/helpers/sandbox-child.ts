/**
 * A sandbox in a process of its own, for tests that kill it: `node --import tsx sandbox-child.ts
 * DATA_FILE TOKEN [OPTIONS_JSON]` prints its address on the first line of stdout and runs until
 * killed. OPTIONS_JSON adds startSandbox options (a fixed port to restart on, faults, OAuth clients).
 */
import { startSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

const [file, token, extra] = process.argv.slice(2);
if (!file || !token) throw new Error('usage: sandbox-child.ts DATA_FILE TOKEN [OPTIONS_JSON]');
const options = JSON.parse(extra ?? '{}') as SandboxOptions;
const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', scheduledDeletes: false, ...options, dataFile: file, tokens: [token] });
process.stdout.write(`${sandbox.url}\n`);
const stop = (): void => {
  void sandbox.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
