/**
 * The MCP SDK's `Transport` for a stateless server answering JSON (MCP 2025-06-18, "Streamable
 * HTTP"), one for the whole app: the route hands it each HTTP request's JSON-RPC request once it
 * has read and checked it, and gets back the SDK `Server`'s response to send.
 *
 * One long-lived `Server` serves every request, so the clients' JSON-RPC ids, which each client
 * picks alone (two agents, or one agent's concurrent requests, may both send `id: 1`), never reach
 * it: each request is handed over under an id of this transport's, the response is matched by that
 * id, and the client's id is put back. A handler finds its request's context (the token's user,
 * what went wrong) by the `extra.requestId` the SDK passes it, which is that id.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The signal the SDK hands each request's handler (`extra.signal`): one for every request, never
 * aborted, since nothing cancels a request here. The route answers a notification, a
 * `notifications/cancelled` among them, without handing it to the server (a stateless server
 * answers each request within its own HTTP request), and nothing closes the transport, so the
 * SDK's two reasons to abort a request's controller never come.
 */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;
// It never dispatches `abort`, so a listener on it would never run; kept, the listeners of every
// request that ever added one (a `fetch` given `extra.signal`, the SDK's task wait) would pile up
// on this one signal for the life of the process.
Object.defineProperty(NEVER_ABORTED, 'addEventListener', { value: () => {} });

/**
 * What the SDK's request dispatch makes for each request in place of Node's `AbortController`,
 * while `exchange` hands it the request (docs/performance.md, decision 59). Node 20 makes each
 * `AbortSignal` an `EventTarget` whose prototype it then swaps, and V8 records no transitions from
 * the map an object with properties gets when its prototype is swapped: every property added after
 * makes a new map, in the old generation. So every signal had maps of its own, each call left them
 * in the old generation (20 major collections in 300,000 calls in process), and every load of
 * `signal.aborted` in the SDK missed V8's caches. Aborted, it answers `signal` with an aborted signal of its own, as the
 * SDK reads it when deciding whether to send a response; only a handler that kept `extra.signal`
 * would not see it, and nothing aborts one here (above).
 */
class RequestAbortController {
  #aborted?: AbortSignal;
  get signal(): AbortSignal {
    return this.#aborted ?? NEVER_ABORTED;
  }
  abort(reason?: unknown): void {
    this.#aborted ??= AbortSignal.abort(reason);
  }
}

/**
 * An error a handler throws for the SDK's `Server` to answer as JSON-RPC's error object (JSON-RPC
 * 2.0 section 5.1), which carries its `code` and `message`. Not the SDK's `McpError`: its message
 * starts "MCP error <code>: ", and the SDK's client, which adds that prefix itself, showed it twice.
 */
export class JsonRpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A request handed to the server and not answered yet. */
interface Exchange<Context> {
  context: Context;
  answer: (response: JSONRPCResponse) => void;
}

export class McpRequestTransport<Context> implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  /** The requests the server is working on, by the id it knows them by. */
  private readonly exchanges = new Map<RequestId, Exchange<Context>>();
  private lastId = 0;
  /** The server's own request dispatch, once `deliverRequestsTo` has found it. */
  private dispatch?: (request: JSONRPCRequest) => void;

  /** Nothing to open: messages come in through `exchange`. */
  async start(): Promise<void> {}

  /** Nothing to release: nothing is pending once each exchange has its answer. */
  async close(): Promise<void> {
    this.onclose?.();
  }

  /**
   * The server's messages. Only responses have somewhere to go: with no SSE stream (the answer is
   * JSON), a request or notification of the server's is dropped, as the SDK's own transport drops
   * them in JSON mode (its tools send none).
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message) return;
    const { id } = message;
    const exchange = id === undefined ? undefined : this.exchanges.get(id);
    if (id === undefined || !exchange) throw new Error(`No request is waiting for the response with id ${String(id)}`);
    this.exchanges.delete(id);
    exchange.answer(message);
  }

  /**
   * Requests go straight to the request dispatch of `server`, connected to this transport. The
   * `onmessage` the SDK's `Protocol.connect` sets tests each message as a result and as an error
   * response before it tests it as a request: for a request, two zod parses that fail, and since
   * zod 4.6 each failure is an object literal with accessors, which V8 gives a map of its own in
   * the old generation, so every call grew the old generation and the server collected it several
   * times a second (docs/performance.md, decision 48). The route hands this transport only what it
   * has found to be a request, so requests go where those tests lead one, `Protocol._onrequest`
   * (private in the SDK's types, a method of its JavaScript since 1.0). In a release without it
   * requests go through `onmessage` as before.
   */
  deliverRequestsTo(server: object): void {
    const onrequest: unknown = Reflect.get(server, '_onrequest');
    if (typeof onrequest === 'function') this.dispatch = (onrequest as (request: JSONRPCRequest) => void).bind(server);
  }

  /** The server's response to `request`, carrying the client's own id; `context` is the handler's meanwhile (`contextOf`). */
  exchange(request: JSONRPCRequest, context: Context): Promise<JSONRPCResponse> {
    const deliver = this.dispatch ?? this.onmessage;
    if (!deliver) throw new Error('The MCP transport is not connected to a server');
    const id = ++this.lastId;
    return new Promise((resolve) => {
      this.exchanges.set(id, { context, answer: (response) => resolve({ ...response, id: request.id }) });
      // The SDK makes the request's AbortController in the synchronous part of its dispatch, and
      // reads `AbortController` from the global scope when it does: for that part only, the global
      // is the request's own kind (`RequestAbortController`); the handler runs later, with Node's.
      const nodeAbortController = globalThis.AbortController;
      globalThis.AbortController = RequestAbortController as unknown as typeof AbortController;
      try {
        deliver({ ...request, id });
      } catch (error) {
        this.exchanges.delete(id);
        throw error;
      } finally {
        globalThis.AbortController = nodeAbortController;
      }
    });
  }

  /** The context of the request the server knows as `requestId` (a handler's `extra.requestId`). */
  contextOf(requestId: RequestId): Context {
    const exchange = this.exchanges.get(requestId);
    if (!exchange) throw new Error(`No request is waiting with id ${String(requestId)}`);
    return exchange.context;
  }
}
