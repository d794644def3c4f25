/**
 * Waits until a stream takes more; fails when it fails or closes first. A stream destroyed by an
 * earlier error (a full disk) never drains and emits nothing more: waiting for 'drain' alone
 * waited for ever, and node exited with 13 and no word. No listener is left behind.
 */
export function drained(stream: NodeJS.WritableStream): Promise<void> {
  if ((stream as { destroyed?: boolean }).destroyed)
    return Promise.reject(new Error('the output was closed before it took everything'));
  return new Promise((resolve, reject) => {
    const done = (error?: Error): void => {
      stream.off('drain', onDrain);
      stream.off('error', done);
      stream.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = (): void => done();
    const onClose = (): void => done(new Error('the output was closed before it took everything'));
    stream.on('drain', onDrain);
    stream.on('error', done);
    stream.on('close', onClose);
  });
}
