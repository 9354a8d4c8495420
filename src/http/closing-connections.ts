/**
 * How a server's connections end when it stops (SIGTERM), so that the stop waits for the requests
 * being answered and for nothing else. Node's close ends the connections idle after an answer, but
 * waits for the others: one opened and silent (a browser's preconnect, a TCP probe) or holding half
 * a request's headers held every stop to its 10 s grace and exit 1, on the public port and on
 * METRICS_PORT alike (attack143).
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';

/**
 * From the stop on (Fastify's `preClose`): a connection that carries no request is ended at once;
 * one answering a request answers it with `Connection: close` (RFC 9112 9.6), so its client sends
 * its next request on a new connection rather than down one about to close, and it ends as soon as
 * its answer is sent (its keep-alive time drops to nothing: 72 s would outlast the grace). Answers
 * made but not yet read (a large one to a slow reader, pipelined ones) are sent whole first.
 */
export function endConnectionsOnClose(app: FastifyInstance): void {
  const open = new Set<Socket>();
  /** Each connection's latest request's answer: answered in order, so the connection is busy while it is unfinished. */
  const answering = new WeakMap<Socket, ServerResponse>();
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  app.server.on('request', (request: { socket: Socket }, response: ServerResponse) => {
    answering.set(request.socket, response);
  });
  const endIdle = () => {
    for (const socket of open) {
      const response = answering.get(socket);
      if (response === undefined || response.writableFinished) socket.destroy();
      else if (!response.headersSent) response.setHeader('connection', 'close');
    }
  };
  app.addHook('preClose', (done) => {
    app.server.keepAliveTimeout = 1;
    // Node's own, which its close and Fastify's call, takes a connection for idle once its answer
    // is ended, though not yet sent: a large answer to a slow reader was cut short (attack145).
    app.server.closeIdleConnections = endIdle;
    endIdle();
    done();
  });
}
