/**
 * Iterates until the iterable ends or `failed` is aborted, whichever comes first; an abort
 * rejects with the signal's reason. Each wait adds one abort listener and removes it when the
 * item comes: racing every item against one long-lived promise would pile up reactions on that
 * promise, a leak that runs a 200,000-row read out of memory.
 */
export async function* untilFailure<T>(iterable: AsyncIterable<T>, failed: AbortSignal): AsyncGenerator<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      failed.throwIfAborted();
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        const onAbort = (): void => reject(failed.reason);
        failed.addEventListener('abort', onAbort, { once: true });
        iterator.next().then(
          (result) => {
            failed.removeEventListener('abort', onAbort);
            resolve(result);
          },
          (error: unknown) => {
            failed.removeEventListener('abort', onAbort);
            reject(error);
          },
        );
      });
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Not awaited: after a failure the inner iterator may be stuck and would never settle.
    if (!finished) iterator.return?.()?.catch(() => {});
  }
}
