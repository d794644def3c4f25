// The floor the importer's CPU is set against (bench/import-cpu.ts): a bare undici loop that POSTs
// given bodies with N requests under way and checks each answer is 201. Plain JavaScript, so that
// its start-up is node's and undici's alone, as a person's own script would be.
// Usage: node bench/bare-post.mjs URL TOKEN BODIES.json CONCURRENCY
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, token, file, concurrencyText] = process.argv.slice(2);
/** Each body with the path it goes to: [{path, json}]. */
const bodies = JSON.parse(readFileSync(file, 'utf8'));
const concurrency = Number(concurrencyText);
const pool = new Pool(url, { connections: concurrency });
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const { path, json } = bodies[next++];
      const answer = await pool.request({ path, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      await answer.body.text();
      if (answer.statusCode !== 201) throw new Error(`${path}: ${answer.statusCode}`);
    }
  }),
);
await pool.close();
