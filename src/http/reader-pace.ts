import type { Writable } from 'node:stream';

/**
 * Writes `piece` to a file being sent and resolves once it can take more: at once while its
 * buffer has room, else when the reader drained it. Rejects when the file was closed (Fastify
 * destroys it when the reader goes away), when the reader took nothing for `patienceMs`, or when
 * it drained the buffer and `tooSlow` says how it was too slow on the whole. A reader that stops
 * must not hold what writing the file holds (a turn, a connection, a picture of the data) for ever.
 */
export function taken(file: Writable, piece: string, patienceMs: number, tooSlow: () => string | undefined): Promise<void> {
  const gone = () => new Error('the reader of the file went away');
  if (file.destroyed) return Promise.reject(gone());
  if (file.write(piece)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      file.off('drain', drained).off('close', closed);
      if (error) reject(error);
      else resolve();
    };
    const drained = () => {
      const slow = tooSlow();
      settle(slow === undefined ? undefined : new Error(`the reader of the file took it ${slow}`));
    };
    const closed = () => settle(gone());
    const timer = setTimeout(() => settle(new Error(`the reader of the file took nothing for ${patienceMs} ms`)), patienceMs);
    file.on('drain', drained).on('close', closed);
  });
}
