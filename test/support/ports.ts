/**
 * Ports for test servers whose address must be known before they listen (BASE_URL names it): one
 * is chosen free, and another process (another test file) may take it before the server listens.
 */
import { createServer, type Server } from 'node:net';

/** A port no process listened on a moment ago: another may take it before the caller listens (`PORT_ATTEMPTS`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/**
 * Two different ports no process listened on a moment ago: both are held open before either is let
 * go, since ports chosen one after the other may be the same one twice.
 */
export async function twoFreePorts(): Promise<[number, number]> {
  const listening = () => new Promise<Server>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    server.once('error', reject);
  });
  const servers = [await listening(), await listening()] as const;
  const port = (server: Server) => (server.address() as { port: number }).port;
  const ports: [number, number] = [port(servers[0]), port(servers[1])];
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** How many times a port taken by another process between `freePort` and `listen` is chosen again. */
export const PORT_ATTEMPTS = 5;

/** Whether `error` is a port taken by another process since `freePort` chose it. */
export function portTaken(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE';
}
