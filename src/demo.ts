// Placeholder demo: starts the sandbox and shows that it answers. Replaced by an import demo once
// the importer exists.
import { startSandbox } from './sandbox/index.ts';

const sandbox = await startSandbox({ port: 0 });
console.log(`sandbox listening on ${sandbox.url}`);
await sandbox.close();
