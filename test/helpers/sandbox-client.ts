import { afterAll, beforeAll } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { startTestSandbox, type TestSandbox } from './sandbox.ts';

/**
 * A sandbox on port 0 and a client of its Administrator, for the tests of one file: started before
 * them, closed after. Read `box` and `client` inside the tests (they are set once started).
 */
export function sandboxForFile(): { readonly box: TestSandbox; readonly client: CrmClient } {
  const held: { box?: TestSandbox; client?: CrmClient } = {};
  beforeAll(async () => {
    held.box = await startTestSandbox();
    held.client = new CrmClient({ baseUrl: held.box.url, auth: held.box.token });
  });
  afterAll(async () => {
    await held.client?.close();
    await held.box?.close();
  });
  return {
    get box() {
      return held.box as TestSandbox;
    },
    get client() {
      return held.client as CrmClient;
    },
  };
}
