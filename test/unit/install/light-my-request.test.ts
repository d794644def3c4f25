import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

/**
 * package.json pins light-my-request (fastify's `inject`) to 6.6.0, the last release on cookie 1:
 * 6.8 asks for cookie 2, which declares Node >= 22, so an install on Node 20.19 warned EBADENGINE.
 * A pin reaches the programs that install crm-ferry (npm places it beside fastify, whose ^6.0.0
 * it satisfies); `overrides` did not, being read from the root project only. This fails if
 * fastify's inject stops working with it, and test/integration/package.test.ts if an install warns.
 */
describe('the light-my-request crm-ferry pins', () => {
  it('is the one fastify uses, on cookie 1', async () => {
    const { createRequire } = await import('node:module');
    const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
    const manifest = fromFastify('light-my-request/package.json') as {
      version: string;
      dependencies: Record<string, string>;
    };
    expect(manifest.version).toBe('6.6.0');
    expect(manifest.dependencies.cookie).toMatch(/^\^1\./);
  });

  it('still encodes the cookies of an injected request', async () => {
    const app = Fastify();
    app.get('/', async (request) => ({ cookie: request.headers.cookie }));
    const answer = await app.inject({ method: 'GET', url: '/', cookies: { a: 'b c', session: 'x' } });
    expect(answer.json()).toEqual({ cookie: 'a=b%20c; session=x' });
    await app.close();
  });
});
