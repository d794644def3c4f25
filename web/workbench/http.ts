/** Requests to the workbench's own server: the only place the page sends anything. */
import type { ErrorBody } from '../../src/workbench/api.ts';

export class ServerError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly line: number | null,
  ) {
    super(message);
  }
}

async function answer<T>(response: Response): Promise<T> {
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok) {
    if (type.includes('json')) {
      const body = (await response.json()) as ErrorBody;
      throw new ServerError(body.error.code, body.error.message, body.error.line ?? null);
    }
    throw new ServerError('HTTP', `${response.status}: ${(await response.text()).trim()}`, null);
  }
  return (await response.json()) as T;
}

export async function get<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } }));
}

export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

export async function upload<T>(path: string, file: File): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/octet-stream', accept: 'application/json' },
      body: file,
    }),
  );
}

/** A query parameter, encoded. */
export function q(name: string, value: string): string {
  return `${name}=${encodeURIComponent(value)}`;
}

/** A number as people read it. */
export function n(value: number): string {
  return value.toLocaleString('en-GB');
}

/** A duration in seconds, in words. */
export function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
