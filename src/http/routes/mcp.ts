/**
 * POST /api/open/v1/mcp (INTERFACE section 13): the resource API for agents, a Model Context
 * Protocol server over Streamable HTTP, stateless, answering JSON. The protocol is the official
 * SDK's: one `Server` for the app, connected to `McpRequestTransport`, which hands it each request
 * under an id of its own; the route answers what the SDK's Streamable HTTP transport answers before
 * a message reaches a server. The tools are the core's (`MCP_TOOLS`), described by the same schemas
 * the API's routes answer by. The bearer gate is the API's, so tokens, the per-token limit, DPoP and
 * every 401 are the API's; a tool whose scope the token lacks is a 403 with its challenge.
 */
import formbody from '@fastify/formbody';
import { type FastifyInstance, type FastifyReply, type FastifyRequest, errorCodes } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CallToolResult, JSONRPCRequest, JSONRPCResponse, ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_PROTOCOL_VERSIONS, MCP_TOOLS, type McpToolName, mcpTool } from '../../core/api/mcp.js';
import { MCP_PATH, mcpResource, resourceMetadataUrl } from '../../core/api/resource.js';
import { API_NAME, API_VERSION } from '../../core/api/views.js';
import { OAuthError } from '../../core/errors.js';
import { firstCharacters, withInvisibleEscaped } from '../../core/text.js';
import { siteUrls } from '../../core/urls.js';
import { JsonRpcError, McpRequestTransport } from '../mcp-transport.js';
import { registerBearerGate, registerGatedNotFound, requestBearer } from '../plugins/bearer.js';
import { preflight } from '../plugins/cors.js';
import type { HeaderSet } from '../plugins/security-headers.js';
import { PageParameterSchema, PostPageSchema, ProfileSchema, SizeParameterSchema } from './api-v1/schemas.js';

/** Each tool's arguments and answer as JSON Schema: the API's own schemas (`/me`, `/me/posts` and its query). */
const TOOL_SCHEMAS: Record<McpToolName, Pick<Tool, 'inputSchema' | 'outputSchema'>> = {
  get_profile: { inputSchema: Type.Object({}), outputSchema: ProfileSchema },
  list_posts: {
    inputSchema: Type.Object({ page: Type.Optional(PageParameterSchema), size: Type.Optional(SizeParameterSchema) }),
    outputSchema: PostPageSchema,
  },
};

/**
 * MCP 2025-06-18 "Tools": every tool, whatever the token's scopes. A client learns what exists
 * from the list and, calling a tool its token lacks the scope of, gets the 403 challenge naming
 * that scope, which is how it knows to ask the user for more (MCP 2025-11-25, "Scope Challenge
 * Handling"). Each description names its scope; every tool only reads.
 */
const TOOL_LIST: ListToolsResult = {
  tools: Object.entries(MCP_TOOLS).map(([name, tool]) => ({
    name,
    title: tool.title,
    description: tool.description,
    ...TOOL_SCHEMAS[name as McpToolName],
    annotations: { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  })),
};

/** A JSON-RPC error answer of the SDK transport's shape (JSON-RPC 2.0 section 5.1), with the request's id when it is known. */
function jsonRpcRefusal(reply: FastifyReply, status: number, code: number, message: string, id: string | number | null = null): FastifyReply {
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id });
}

/** One of the SDK's zod schemas, as far as a refusal reads it. */
interface MessageSchema {
  safeParse(message: unknown): { success: boolean; error?: { issues: ReadonlyArray<MessageIssue> } | undefined };
}
interface MessageIssue { path: readonly PropertyKey[]; message: string }

/**
 * The first field at fault and what is wrong with it, in a line: `params.arguments: Invalid input:
 * expected record, received string`; `whole` names the value itself.
 */
function issueText(issue: MessageIssue, whole: string): string {
  const where = issue.path.map(String).join('.') || whole;
  // Keys a client sent may hold line breaks and direction overrides: escaped, a message stays one line (attack82).
  return `${firstCharacters(withInvisibleEscaped(where), 64)}: ${firstCharacters(withInvisibleEscaped(issue.message), 160)}`;
}

/** A plain object, as a JSON-RPC message is. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * MCP 2025-06-18 "Lifecycle": a server that does not speak the version a client asks for answers
 * with one it does, its latest. The SDK would also answer older revisions this server does not
 * offer (INTERFACE section 13), so the request is handed to it asking for the latest instead.
 */
function negotiated(message: Record<string, unknown>): Record<string, unknown> {
  if (message.method !== 'initialize' || !isObject(message.params)) return message;
  const asked = message.params.protocolVersion;
  if ((MCP_PROTOCOL_VERSIONS as readonly unknown[]).includes(asked)) return message;
  return { ...message, params: { ...message.params, protocolVersion: MCP_PROTOCOL_VERSIONS[0] } };
}

/**
 * MCP 2025-11-25 "Tasks", "Task Support and Handling": a receiver that does not declare the tasks
 * capability for a request MUST process it normally, ignoring its task metadata. This server
 * declares none, but the SDK's `Server` refuses a request with `params.task` as -32603 all the same
 * (it asserts the capability), so the field is taken off before the request reaches it, whatever
 * it holds.
 */
function withoutTask(message: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(message.params) || !('task' in message.params)) return message;
  const { task: _ignored, ...params } = message.params;
  return { ...message, params };
}

/** The tool result of an `OAuthError` a tool refused its arguments with: the API's error body, for the model to read and correct (MCP 2025-11-25, "Error Handling"). */
function toolError(error: OAuthError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: error.code, error_description: error.description }) }] };
}

/** What a tool handler needs of its HTTP request, and what it leaves for the route. */
interface CallContext {
  bearer: ReturnType<typeof requestBearer>;
  /** A failure that is no refusal of the arguments (the database unreachable), for the route to answer as the API does. */
  failure?: unknown;
}

export async function mcpRoutes(app: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  const { baseUrl } = app.deps.settings;
  // RFC 9728 5.1 and MCP 2025-06-18 "Authorization": every challenge names this resource's metadata.
  const gate = registerBearerGate(app, options.securityHeaders, { resourceMetadata: resourceMetadataUrl(baseUrl, MCP_PATH), resource: mcpResource(baseUrl), readsForm: 'besideHeader' });
  const urls = siteUrls(baseUrl);
  // The body is read as text and parsed by the route alone: it reads the message to know which
  // tool it calls (and so which scope it needs), and JSON that does not parse is JSON-RPC's -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // A form is no message; it is read (only once the header's token was admitted: without the
  // header the gate refuses it unread) for the gate to refuse `access_token` in it, one method a
  // request (RFC 6750 2). Any other form is then the 415 of every type this endpoint does not take.
  await app.register(formbody);

  // One server for every request: building a `Server` and a transport per request cost more than
  // the rest of the call. Its validator is made here too, as the `Server` would build one otherwise;
  // it validates nothing (this server never asks the client for input). It keeps no state of a
  // client: what `initialize` leaves in it (the client's capabilities) is read only to ask the
  // client something, which this server never does. The SDK, and zod under it, is loaded and the
  // server made at the first request to this path: a service no agent calls does not hold them
  // (docs/performance.md, decision 29).
  let started: ReturnType<typeof startMcp> | undefined;
  async function startMcp() {
    const [{ Server }, { isJsonContentType }, sdkTypes, { AjvJsonSchemaValidator }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/shared/mediaType.js'),
      import('@modelcontextprotocol/sdk/types.js'), import('@modelcontextprotocol/sdk/validation/ajv'),
    ]);
    const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } = sdkTypes;
    const transport = new McpRequestTransport<CallContext>();
    const server = new Server({ name: API_NAME, version: API_VERSION }, { capabilities: { tools: {} }, jsonSchemaValidator: new AjvJsonSchemaValidator() });
    server.setRequestHandler(ListToolsRequestSchema, () => TOOL_LIST);
    // `extra.signal` is one signal shared by every request (decision 59): a handler must neither
    // combine it (`AbortSignal.any` keeps each call's dependant on it for good on Node 20) nor set
    // anything on it (the next request would see it); one that needs cancellation needs its own.
    server.setRequestHandler(CallToolRequestSchema, async ({ params }, { requestId }) => {
      const tool = mcpTool(params.name);
      // JSON-RPC -32602 for an unknown tool (MCP 2025-06-18, "Error Handling").
      if (!tool) throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(firstCharacters(params.name, 64))}; the tools are ${Object.keys(MCP_TOOLS).join(', ')}.`);
      const context = transport.contextOf(requestId);
      try {
        const answer = await tool.call({ stores: app.deps.stores, urls, bearer: context.bearer }, params.arguments ?? {});
        return { structuredContent: { ...answer }, content: [{ type: 'text', text: JSON.stringify(answer) }] };
      } catch (error) {
        if (error instanceof OAuthError) return toolError(error);
        context.failure = error;
        throw new JsonRpcError(ErrorCode.InternalError, 'The server could not complete the request.');
      }
    });
    await server.connect(transport);
    transport.deliverRequestsTo(server);
    // The methods this server answers, by the schema the SDK reads each request's params with.
    const requestSchemas: ReadonlyMap<string, MessageSchema> = new Map<string, MessageSchema>([
      ['initialize', sdkTypes.InitializeRequestSchema], ['ping', sdkTypes.PingRequestSchema], ['tools/list', ListToolsRequestSchema], ['tools/call', CallToolRequestSchema],
    ]);
    /**
     * JSON-RPC 2.0 section 5.1: params of the wrong shape are -32602 "Invalid params". The SDK
     * answers its own reading of them -32603 with zod's issues, every one, as the message
     * (attack77). Read again only once the SDK has refused, so a call that reads costs nothing more.
     */
    const paramsRefused = (request: JSONRPCRequest, answer: JSONRPCResponse): JSONRPCResponse => {
      if (!('error' in answer) || answer.error.code !== ErrorCode.InternalError) return answer;
      const read = requestSchemas.get(request.method)?.safeParse(request);
      const issue = read?.success === false ? read.error?.issues[0] : undefined;
      if (!issue) return answer;
      return { jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${issueText(issue, 'params')}` } };
    };
    /**
     * JSON that is no JSON-RPC message, by the SDK's schemas. JSON-RPC 2.0 section 5.1 keeps -32700
     * for text that is not JSON, which the SDK's transport answers here too, with `id: null`
     * (attack80): a request (an `id` and a `method`) whose params are of the wrong shape is -32602
     * with its id, as the `Server` answers one whose params it cannot read, or -32601 when this
     * server has no such method, as the `Server` answers whatever the params; anything else is
     * -32600 "Invalid Request", with the id when it is one the SDK takes (a string, or an integer
     * JSON's numbers hold exactly: a larger one would be echoed as another number).
     */
    const messageRefused = (message: unknown): { status: number; code: number; message: string; id: string | number | null } => {
      const fields = isObject(message) ? message : {};
      const id = typeof fields.id === 'string' || Number.isSafeInteger(fields.id) ? fields.id as string | number : null;
      const schema = !('id' in fields) ? sdkTypes.JSONRPCNotificationSchema : 'method' in fields ? sdkTypes.JSONRPCRequestSchema : sdkTypes.JSONRPCResponseSchema;
      const read = schema.safeParse(message);
      const issue = read.success ? undefined : read.error?.issues[0];
      const described = issue ? issueText(issue, 'message') : 'not a JSON-RPC message';
      if (id !== null && 'method' in fields && issue?.path[0] === 'params') {
        if (typeof fields.method === 'string' && !requestSchemas.has(fields.method)) {
          return { status: 200, code: ErrorCode.MethodNotFound, message: 'Method not found', id };
        }
        return { status: 200, code: ErrorCode.InvalidParams, message: `Invalid params: ${described}`, id };
      }
      return { status: 400, code: ErrorCode.InvalidRequest, message: `Invalid Request: ${described}`, id };
    };
    return { transport, isJsonContentType, paramsRefused, messageRefused, ...sdkTypes };
  }

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.body !== undefined && typeof request.body !== 'string') throw new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE();
    // A start that failed is not kept: the next request tries again. This recovers from an SDK
    // not found at the first call (an install still being written); Node keeps a module that was
    // found but failed to load, and for that only a restart helps.
    started ??= startMcp().catch((error: unknown) => {
      started = undefined;
      throw error;
    });
    const { transport, isJsonContentType, isJSONRPCRequest, JSONRPCMessageSchema, ErrorCode, paramsRefused, messageRefused } = await started;
    const text = typeof request.body === 'string' ? request.body : undefined;
    let message: unknown;
    try {
      message = text === undefined ? undefined : JSON.parse(text);
    } catch {
      // Answered here: the server is handed only what this parser read, never text another parser
      // might read otherwise (the SDK's transport drops a leading byte order mark, which JSON.parse
      // refuses), so the scope check below sees every call the server runs.
      return jsonRpcRefusal(reply, 400, ErrorCode.ParseError, 'Parse error: Invalid JSON');
    }
    // MCP 2025-06-18 removed JSON-RPC batching; each message comes in a request of its own.
    if (Array.isArray(message)) return jsonRpcRefusal(reply, 400, ErrorCode.InvalidRequest, 'Invalid Request: batches are not supported (MCP 2025-06-18 and later): send one JSON-RPC message per request.');
    // MCP 2025-06-18 "Protocol Version Header": an unsupported version is 400.
    const version = request.headers['mcp-protocol-version'];
    if (version !== undefined && !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(String(version))) {
      return jsonRpcRefusal(reply, 400, ErrorCode.InvalidRequest, `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(firstCharacters(String(version), 40))}: this server speaks ${MCP_PROTOCOL_VERSIONS.join(' and ')}.`);
    }
    if (isObject(message)) {
      if (message.method === 'tools/call' && isObject(message.params)) {
        const tool = mcpTool(message.params.name);
        const refused = tool && gate.requireScope(request, reply, tool.scope);
        if (refused) return refused;
      }
      message = withoutTask(negotiated(message));
    }

    // MCP 2025-06-18 "Sending Messages to the Server": the answers the SDK's Streamable HTTP
    // transport gives, in its order, with its words.
    const accept = request.headers.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return jsonRpcRefusal(reply, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    // A body of another type never gets here (Fastify's 415 first); a request with none may.
    if (!isJsonContentType(request.headers['content-type'] ?? null)) {
      return jsonRpcRefusal(reply, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (message === undefined) return jsonRpcRefusal(reply, 400, ErrorCode.ParseError, 'Parse error: Invalid JSON');
    // Only a request has an answer; a notification or a response the client sends has nothing
    // to do on a stateless server that asks the client nothing and cancels nothing (each request is
    // answered within its own HTTP request), so it is accepted without reaching the server.
    if (!isJSONRPCRequest(message)) {
      if (!JSONRPCMessageSchema.safeParse(message).success) {
        const refused = messageRefused(message);
        gate.refusedInAnswer(request);
        return jsonRpcRefusal(reply, refused.status, refused.code, refused.message, refused.id);
      }
      return reply.code(202).send();
    }
    const context: CallContext = { bearer: requestBearer(request) };
    const answer = paramsRefused(message, await transport.exchange(message, context));
    if (context.failure !== undefined) throw context.failure;
    // A JSON-RPC error or a tool's refusal, answered 200, is no use of the token, as the API's 400
    // for the same is none (docs/api.md, "Last use").
    if ('error' in answer || answer.result.isError === true) gate.refusedInAnswer(request);
    return reply.type('application/json').send(JSON.stringify(answer));
  };

  app.post(MCP_PATH, { config: { bearerScope: '' } }, handle);
  // No SSE stream and no session: GET (and its HEAD), DELETE and the rest are 405 with `Allow: POST` from the
  // not-found handler. They pass this gate, not the API's catch-all under /api/open/v1/*: the SDK's
  // transport opens its stream with GET and the token it got for this resource (RFC 8707), which
  // the API's gate refuses (401 sends the SDK back to authorization; 405 tells it there is no
  // stream). A token sent is checked and counted as on POST (INTERFACE section 7); none, 405.
  // In a context that reads no body, as the API's catch-all: an anonymous PUT was read (up to the
  // body limit) before its 405.
  await registerGatedNotFound(app, [{ url: MCP_PATH, taken: ['POST'] }]);
  // A browser-based agent posts JSON with the protocol's version header from its own origin.
  preflight(app, [MCP_PATH], ['POST'], ['Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID']);
}
