/**
 * The MCP route's transport (src/http/mcp-transport.ts) with the official SDK's `Server`: each
 * request is answered under the client's own id, and reaches the server's request dispatch
 * without being parsed as a response first (docs/performance.md, decision 48), with a controller of the transport's (decision 59).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  JSONRPCErrorResponseSchema, JSONRPCResultResponseSchema, ListToolsRequestSchema, type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { McpRequestTransport } from '../../src/http/mcp-transport.js';

/** A server with one tool, connected to a new transport; `dispatch`: hand requests to its request dispatch. */
async function connected(options: { dispatch: boolean }): Promise<McpRequestTransport<string>> {
  const transport = new McpRequestTransport<string>();
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (_request, { requestId }) => ({
    tools: [{ name: transport.contextOf(requestId), inputSchema: { type: 'object' as const } }],
  }));
  await server.connect(transport);
  if (options.dispatch) transport.deliverRequestsTo(server);
  return transport;
}

/** How often the SDK's response schemas are asked to parse a message while `run` runs. */
async function responseParses(run: () => Promise<unknown>): Promise<number> {
  // Typed as what is replaced: each schema's own `safeParse`, called by the SDK's type guards.
  const schemas: Array<{ safeParse: (value: unknown) => unknown }> = [JSONRPCResultResponseSchema, JSONRPCErrorResponseSchema];
  const originals = schemas.map((schema) => schema.safeParse);
  let parses = 0;
  schemas.forEach((schema, i) => {
    schema.safeParse = (value) => {
      parses += 1;
      return originals[i]!(value);
    };
  });
  try {
    await run();
  } finally {
    schemas.forEach((schema, i) => { schema.safeParse = originals[i]!; });
  }
  return parses;
}

const listTools = (id: string | number): JSONRPCRequest => ({ jsonrpc: '2.0', id, method: 'tools/list' });

test('each request is answered under the id its client sent, with its own context, when both clients chose the same id', async () => {
  const transport = await connected({ dispatch: true });
  const answers = await Promise.all([transport.exchange(listTools(1), 'first'), transport.exchange(listTools(1), 'second')]);
  assert.deepEqual(answers, [
    { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'first', inputSchema: { type: 'object' } }] } },
    { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'second', inputSchema: { type: 'object' } }] } },
  ]);
});

test('a request goes to the server\'s request dispatch without being parsed as a response', async () => {
  const transport = await connected({ dispatch: true });
  const parses = await responseParses(() => transport.exchange(listTools('a'), 'agent'));
  assert.equal(parses, 0);
});

test('before the request dispatch is found, requests go through the SDK\'s onmessage, which parses them as responses first', async () => {
  const transport = await connected({ dispatch: false });
  let answer: unknown;
  const parses = await responseParses(async () => { answer = await transport.exchange(listTools('a'), 'agent'); });
  assert.equal(parses, 2);
  assert.deepEqual(answer, { jsonrpc: '2.0', id: 'a', result: { tools: [{ name: 'agent', inputSchema: { type: 'object' } }] } });
});

test('requests are answered the same through the dispatch as through onmessage', async () => {
  const [straight, throughOnmessage] = await Promise.all([connected({ dispatch: true }), connected({ dispatch: false })]);
  const requests: JSONRPCRequest[] = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'agent', version: '1' } } },
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    listTools(3),
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_profile', arguments: {} } },
    { jsonrpc: '2.0', id: 5, method: 'resources/list' },
    { jsonrpc: '2.0', id: 6, method: 'tasks/get', params: { taskId: 'x' } },
    { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { progressToken: 1, 'io.modelcontextprotocol/related-task': { taskId: 'x' } } } },
  ];
  for (const request of requests) {
    assert.deepEqual(await straight.exchange(request, 'agent'), await throughOnmessage.exchange(request, 'agent'), request.method);
  }
});

test('every request\'s handler gets one signal, never aborted, and Node\'s AbortController is the global again once a request is handed over (decision 59)', async () => {
  const nodeAbortController = globalThis.AbortController;
  const transport = new McpRequestTransport<string>();
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  const seen: Array<{ signal: AbortSignal; global: typeof AbortController }> = [];
  server.setRequestHandler(ListToolsRequestSchema, (_request, { signal }) => {
    seen.push({ signal, global: globalThis.AbortController });
    return { tools: [] };
  });
  await server.connect(transport);
  transport.deliverRequestsTo(server);
  await Promise.all([transport.exchange(listTools(1), 'first'), transport.exchange(listTools(2), 'second')]);
  assert.equal(seen.length, 2);
  // Node's controller would give each request a signal of its own: one signal for both shows the
  // SDK made the transport's controller (if this fails, the SDK makes its controllers otherwise).
  assert.equal(seen[0]!.signal, seen[1]!.signal);
  assert.ok(seen[0]!.signal instanceof AbortSignal);
  assert.equal(seen[0]!.signal.aborted, false);
  assert.equal(seen[0]!.global, nodeAbortController);
  assert.equal(globalThis.AbortController, nodeAbortController);
});

test('a listener added to a request\'s signal is not kept: the one signal never aborts, and would hold every request\'s (decision 59)', async () => {
  const transport = new McpRequestTransport<string>();
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  const signals: AbortSignal[] = [];
  server.setRequestHandler(ListToolsRequestSchema, (_request, { signal }) => {
    signal.addEventListener('abort', () => {});
    signals.push(signal);
    return { tools: [] };
  });
  await server.connect(transport);
  transport.deliverRequestsTo(server);
  for (const id of [1, 2, 3]) await transport.exchange(listTools(id), 'agent');
  assert.equal(signals.length, 3);
  for (const signal of signals) assert.equal(getEventListeners(signal, 'abort').length, 0);
});

test('a dispatch that throws leaves Node\'s AbortController the global', async () => {
  const nodeAbortController = globalThis.AbortController;
  const transport = new McpRequestTransport<string>();
  transport.deliverRequestsTo({ _onrequest: () => { throw new Error('dispatch failed'); } });
  await assert.rejects(transport.exchange(listTools(1), 'agent'), /dispatch failed/);
  assert.equal(globalThis.AbortController, nodeAbortController);
  assert.throws(() => transport.contextOf(1), /No request is waiting/);
});

test('a request\'s controller, aborted, answers an aborted signal to the SDK, which then sends nothing for it', async () => {
  const transport = new McpRequestTransport<string>();
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  let release: () => void = () => {};
  server.setRequestHandler(ListToolsRequestSchema, () => new Promise((resolve) => { release = () => resolve({ tools: [] }); }));
  await server.connect(transport);
  transport.deliverRequestsTo(server);
  const controllers = Reflect.get(server, '_requestHandlerAbortControllers') as Map<unknown, { signal: AbortSignal; abort(reason?: unknown): void }>;
  let answered = false;
  void transport.exchange(listTools(1), 'agent').then(() => { answered = true; });
  await new Promise((resolve) => setImmediate(resolve));
  const [controller] = [...controllers.values()];
  assert.ok(controller);
  assert.equal(controller.signal.aborted, false);
  controller.abort('cancelled');
  assert.equal(controller.signal.aborted, true);
  assert.equal(controller.signal.reason, 'cancelled');
  release();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, false);
});
