/**
 * `npx tsx bench/mcp-inprocess.ts [--calls 20000] [--rounds 5] [--out FILE]`: what the MCP SDK
 * costs per `tools/call` in process, no HTTP and no database, to set against the CPU µs of a whole
 * `/me` (scenario a) and a whole `get_profile` over HTTP (scenario i). Scenario i is `/me`'s work
 * (HTTP, Fastify, the bearer gate, the profile) plus the MCP route's; this measures the route's
 * part piece by piece:
 *
 * - `checks`: what the route does before the SDK: `JSON.parse` of the body and the SDK's own test
 *   that the message is a JSON-RPC request (a zod parse);
 * - `dispatch`: the shared `Server` behind `McpRequestTransport`, from the message handed over to
 *   the response back (the SDK's zod parse of the request, its handler call, its zod parse of the
 *   result), the tool answering a fixed `/me`-shaped object at once; the message goes to the
 *   server's request dispatch, as the route hands it (`deliverRequestsTo`, decision 48);
 * - `onmessage`: the same through the `onmessage` the SDK sets, which first parses the message as
 *   a result and as an error response (the route's way before decision 48);
 * - `answer`: `JSON.stringify` of that response, the body the route sends;
 * - `pair`: for comparison, what the route did before: a `Server` and a web-standard Streamable HTTP
 *   transport per request, the request handed over parsed, the answer read back as text.
 *
 * Each piece runs `calls` times one after the other, the pieces alternating over `rounds` rounds;
 * the figure is the median round's CPU time (user + system) per call.
 * Writes bench/results/<date>-mcp-inprocess.json.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, isJSONRPCRequest, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { McpRequestTransport } from '../src/http/mcp-transport.js';
import { parseBenchArguments, readBenchArguments, wholeNumber } from './arguments.js';
import { writeResults } from './results-file.js';
import { median } from './statistics.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = 'usage: npx tsx bench/mcp-inprocess.ts [--calls 20000] [--rounds 5] [--out FILE]';
const { values, calls, rounds } = readBenchArguments(() => {
  const typed = parseBenchArguments({ calls: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' }, out: { type: 'string' } });
  return { values: typed, calls: wholeNumber(typed.calls, '--calls', 1), rounds: wholeNumber(typed.rounds, '--rounds', 1) };
}, USAGE);

/** What scenario i posts (bench/wrk/mcp.lua). */
const BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_profile","arguments":{}}}';
/** A `/me` answer as the bench's users have it. */
const PROFILE = {
  id: 42, username: 'bench-user-42', avatarUrl: 'http://127.0.0.1:3000/avatars/42', bio: '', member: false, level: 1, xp: 0,
  profileUrl: 'http://127.0.0.1:3000/u/bench-user-42', createdAt: '2026-11-24T08:00:00',
};
const result = (): CallToolResult => ({ structuredContent: { ...PROFILE }, content: [{ type: 'text', text: JSON.stringify(PROFILE) }] });
const jsonSchemaValidator = new AjvJsonSchemaValidator();
const newServer = () => {
  const server = new Server({ name: 'bench', version: '1' }, { capabilities: { tools: {} }, jsonSchemaValidator });
  server.setRequestHandler(CallToolRequestSchema, result);
  return server;
};

/** A transport connected to a server of its own; `dispatch`: requests go to the server's request dispatch. */
async function connected(dispatch: boolean): Promise<McpRequestTransport<undefined>> {
  const transport = new McpRequestTransport<undefined>();
  const server = newServer();
  await server.connect(transport);
  if (dispatch) transport.deliverRequestsTo(server);
  return transport;
}
const transport = await connected(true);
const throughOnmessage = await connected(false);
const message = JSON.parse(BODY) as JSONRPCRequest;
const answer = await transport.exchange(message, undefined);

const pieces: Record<string, () => unknown> = {
  checks: () => isJSONRPCRequest(JSON.parse(BODY)),
  dispatch: () => transport.exchange(message, undefined),
  onmessage: () => throughOnmessage.exchange(message, undefined),
  answer: () => JSON.stringify(answer),
  pair: async () => {
    const pair = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await newServer().connect(pair);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' };
    const response = await pair.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers }), { parsedBody: JSON.parse(BODY) });
    return response.text();
  },
};

/** CPU µs per call of `piece`, over `calls` calls one after the other. */
async function measure(piece: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await piece();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const perRound = new Map<string, number[]>(Object.keys(pieces).map((name) => [name, []]));
for (const piece of Object.values(pieces)) await measure(piece); // warm-up: the JIT, before any round counts
for (let round = 0; round < rounds; round++) {
  for (const [name, piece] of Object.entries(pieces)) perRound.get(name)!.push(await measure(piece));
}
const figures = Object.fromEntries([...perRound].map(([name, xs]) => [name, { cpuMicrosPerCall: Number(median(xs).toFixed(1)), rounds: xs.map((x) => Number(x.toFixed(1))) }]));
const report = {
  date: new Date().toISOString(),
  setup: { node: process.version, cpu: cpus()[0]?.model, calls, rounds, sdk: (JSON.parse(readFileSync(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')) as { version: string }).version },
  figures,
};
for (const [name, { cpuMicrosPerCall }] of Object.entries(figures)) console.log(`${name.padEnd(10)} ${cpuMicrosPerCall.toFixed(1).padStart(7)} µs CPU per call`);
const file = writeResults(report, 'mcp-inprocess', report.date, values.out);
console.log(`written to ${file}`);
