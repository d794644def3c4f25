// The sandbox in a process of its own for the benchmarks (bench/import-setup.ts forks it): its
// options as JSON in the first argument; sends its address, and closes when sent any message.
import { startSandbox, type SandboxOptions } from '../src/sandbox/index.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as SandboxOptions;
const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', ...options });
process.send?.({ url: sandbox.url });
process.on('message', () => void sandbox.close().then(() => process.exit(0)));
