/**
 * Ports for test servers whose address must be known before they listen (BASE_URL names it): one
 * is chosen free, and another process (another test file) may take it before the server listens.
 */
import { createServer, type Server } from 'node:net';

/** A server listening on a port the system chose. */
function listening(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    server.once('error', reject);
  });
}

/** The port `server` listens on, let go: free once this resolves. */
async function released(server: Server): Promise<number> {
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A port no process listened on a moment ago: another may take it before the caller listens (`PORT_ATTEMPTS`). */
export async function freePort(): Promise<number> {
  return released(await listening());
}

/**
 * Two different ports no process listened on a moment ago: both are held open before either is let
 * go, since ports chosen one after the other may be the same one twice.
 */
export async function twoFreePorts(): Promise<[number, number]> {
  const [first, second] = [await listening(), await listening()];
  return Promise.all([released(first), released(second)]);
}

/** How many times a port taken by another process between `freePort` and `listen` is chosen again. */
export const PORT_ATTEMPTS = 5;

/** Whether `error` is a port taken by another process since `freePort` chose it. */
export function portTaken(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE';
}
