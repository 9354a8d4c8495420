/**
 * OpenTelemetry traces (docs/operations.md, "Traces"): the compiled server as a process with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver run here (the JSON protocol,
 * decoded as it arrives), driven through a code flow, the token request and /me over real HTTP.
 * Every secret the run handled is then looked for in everything the server exported.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { Client } from '../../src/core/oauth/ports.js';
import type { TestApp } from '../support/app.js';
import { svc } from '../support/cli.js';
import { forEachDatabase, temporarySqlitePath } from '../support/databases.js';
import { freePort, twoFreePorts } from '../support/ports.js';
import { compiled, run, type Running, SERVICE_ENTRY } from '../support/processes.js';
import { redisUrl } from '../support/redis.js';
import { Browser, type TestClient, codeExchangeFields, obtainCode, pkcePair, tokenRequest } from '../oauth/helpers.js';

/** An OTLP attribute as the JSON protocol encodes it. */
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}

interface ExportRequest {
  resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

const SPAN_KIND_SERVER = 2;

/** An OTLP/HTTP receiver: keeps every body posted to /v1/traces, raw and decoded. */
async function otlpReceiver(): Promise<{ url: string; bodies: string[]; requests: ExportRequest[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => { body += chunk; });
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json') bodies.push(body);
      response.writeHead(request.url === '/v1/traces' ? 200 : 404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    get requests() { return bodies.map((b) => JSON.parse(b) as ExportRequest); },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value && (value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue);
}

/** Whether `span` descends from `ancestor` through the spans exported. */
function descendsFrom(span: OtlpSpan, ancestor: OtlpSpan, byId: Map<string, OtlpSpan>): boolean {
  for (let parent = span.parentSpanId; parent; parent = byId.get(parent)?.parentSpanId) {
    if (parent === ancestor.spanId) return true;
  }
  return false;
}

async function stop(server: Running): Promise<number | string> {
  server.child.kill('SIGTERM');
  return server.exited;
}

test('without OTEL_EXPORTER_OTLP_ENDPOINT the server loads no OpenTelemetry module; with it, it does', { timeout: 120_000 }, async () => {
  compiled();
  const loaded = async (env: Record<string, string>): Promise<string[]> => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-modules-')), 'loaded.txt');
    const port = await freePort();
    const server = run(process.execPath, ['--import', './test/support/loaded-modules.mjs', SERVICE_ENTRY], {
      DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn', LOADED_MODULES_FILE: file, ...env,
    });
    await server.waitFor(/Listening on/);
    // A request through the bearer path /me takes, so its modules are loaded too.
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/open/v1/me`, { headers: { authorization: 'Bearer svca_nothing' } })).status, 401);
    assert.equal(await stop(server), 0, server.output());
    return readFileSync(file, 'utf8').split('\n').filter((m) => /[/\\]@opentelemetry[/\\]|[/\\]@fastify[/\\]otel[/\\]|import-in-the-middle/.test(m));
  };
  // prom-client loads the API (a no-op until an SDK registers) for its exemplars, as it did before traces.
  const apiOnly = (m: string) => /[/\\]@opentelemetry[/\\]api[/\\]/.test(m);
  assert.deepEqual((await loaded({})).filter((m) => !apiOnly(m)), [], 'no OpenTelemetry SDK, instrumentation or hook without the variable');
  const receiver = await otlpReceiver();
  try {
    const withTracing = await loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    assert.ok(withTracing.some((m) => m.includes('@opentelemetry/sdk-node')), 'the list sees the SDK when it is loaded');
  } finally {
    await receiver.close();
  }
});

test('an OTLP endpoint that is no http(s) URL, or a protocol the specification does not name, stops the start with one line naming the setting, exit 2', async () => {
  compiled();
  const cases: Array<[Record<string, string>, string]> = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }, 'invalid setting OTEL_EXPORTER_OTLP_ENDPOINT="localhost:4318": accepts an absolute http:// or https:// URL without query, fragment or credentials\n'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'carrier-pigeon' }, 'invalid setting OTEL_EXPORTER_OTLP_PROTOCOL="carrier-pigeon": accepts http/protobuf, http/json, grpc\n'],
  ];
  for (const [env, line] of cases) {
    const path = temporarySqlitePath();
    const server = run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: `sqlite:${path}`, PORT: String(await freePort()), DEMO: '0', ...env });
    assert.equal(await server.exited, 2);
    assert.equal(server.output(), line);
    assert.equal(existsSync(path), false, 'no database file was created');
  }
});

test('a collector that does not answer neither fails nor holds up a stop: SIGTERM exits 0 within the 2 s flush', { timeout: 60_000 }, async () => {
  compiled();
  const [port, collectorPort] = await twoFreePorts();
  const server = run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn',
    // A port nobody listens on: every export is refused, and the exporter tries again for a while.
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`, OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  await server.waitFor(/Listening on/);
  for (let i = 0; i < 3; i++) {
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stopped = Date.now();
  assert.equal(await stop(server), 0, server.output());
  assert.ok(Date.now() - stopped < 5_000, `stopped in ${Date.now() - stopped} ms`);
});

test('spans name the site\'s scopes by name, never by a line of their source, which the bundle npm start runs rewrites', { timeout: 60_000 }, async () => {
  compiled();
  const receiver = await otlpReceiver();
  const port = await freePort();
  const server = run(process.execPath, [SERVICE_ENTRY], {
    DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), DEMO: '0', LOG_LEVEL: 'warn',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  try {
    await server.waitFor(/Listening on/);
    for (const path of ['/login', '/static/style.css', '/api/oauth/userinfo']) await (await fetch(`http://127.0.0.1:${port}${path}`)).arrayBuffer();
  } finally {
    assert.equal(await stop(server), 0, server.output());
    await receiver.close();
  }
  const spans = receiver.requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
  const names = [...new Set(spans.flatMap((s) => [s.name, String(attribute(s, 'hook.name') ?? '')]))].filter((n) => n !== '');
  // Unnamed, Fastify names a scope by its first two lines: `async (site) => { -- await
  // site.register(cookie);` unbundled, `… site.register(import_cookie2.default);` in the bundle.
  for (const name of names) assert.doesNotMatch(name, /=>|\bimport_|register\(/, `a span named by source text: ${name}`);
  assert.ok(names.some((n) => /^site -> @fastify\/cookie/.test(n)), names.join('\n'));
});

forEachDatabase('traces over OTLP', (database) => {
  test('each request is a server span with its route, its queries and Redis calls are its children, and no secret is in any span', { timeout: 180_000 }, async () => {
    const secrets: string[] = [];
    const keep = (secret: string) => { secrets.push(secret); return secret; };
    // What the queries were given for them: the stored hashes, parameter values a span must not carry.
    const keepWithHash = (secret: string) => { secrets.push(secret, hashSecret(secret)); return secret; };
    const username = `otel${randomBytes(3).toString('hex')}`;
    const password = keep(`pw ${randomBytes(8).toString('hex')}`);
    svc(database.url, ['user', 'create', '--username', username, '--password', password, '--json']);
    const registered = svc(database.url, ['client', 'create', '--name', 'Traced App', '--type', 'confidential',
      '--redirect-uri', 'https://app.example/callback', '--json']).json as { client_id: string; client_secret: string };
    keep(registered.client_secret);

    compiled();
    const receiver = await otlpReceiver();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const server = run(process.execPath, [SERVICE_ENTRY], {
      DATABASE_URL: database.url, PORT: String(port), BASE_URL: baseUrl, DEMO: '0', LOG_LEVEL: 'warn', JANITOR_INTERVAL: '0',
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      assert.match(await server.waitFor(/Traces: .*\n/), new RegExp(`Traces: OpenTelemetry over OTLP \\(http/json\\) to ${receiver.url}\n`));
      const t = { baseUrl } as TestApp;
      const app: TestClient = { client: { clientId: registered.client_id } as Client, secret: registered.client_secret, redirectUri: 'https://app.example/callback' };
      const browser = new Browser(t);
      assert.equal((await browser.signIn(username, password)).status, 303);
      const pkce = pkcePair();
      keep(pkce.verifier);
      const state = keep(`state-${randomBytes(8).toString('hex')}`);
      const code = keepWithHash(await obtainCode(browser, app, { pkce, state }));
      const response = await tokenRequest(t, codeExchangeFields(app, code, pkce));
      assert.equal(response.status, 200);
      const tokens = (await response.json()) as { access_token: string; refresh_token: string };
      keep(tokens.access_token);
      keepWithHash(tokens.refresh_token);
      assert.equal((await fetch(`${baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, 200);
      // A client that puts its token in the query string (RFC 6750 2.3): the URL reaches a span, the token must not.
      await fetch(`${baseUrl}/api/open/v1/me?access_token=${tokens.access_token}`);
      for (const cookie of ['svc_session', 'svc_csrf']) keep(browser.cookies.get(cookie)!);
    } finally {
      // SIGTERM flushes the spans still batched before the process exits.
      assert.equal(await stop(server), 0, server.output());
      await receiver.close();
    }

    const spans = receiver.requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const resource = receiver.requests[0]!.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name');
    assert.equal(resource?.value.stringValue, 'svc-identity');

    const serverSpan = (method: string, route: string) => {
      const found = spans.filter((s) => s.kind === SPAN_KIND_SERVER && attribute(s, 'http.route') === route
        && (attribute(s, 'http.method') ?? attribute(s, 'http.request.method')) === method);
      assert.ok(found.length > 0, `a server span for ${method} ${route}: ${spans.filter((s) => s.kind === SPAN_KIND_SERVER).map((s) => s.name).join(', ')}`);
      return found[0]!;
    };
    for (const [method, route] of [['GET', '/login'], ['POST', '/login'], ['GET', '/oauth/authorize'], ['POST', '/oauth/authorize']] as const) serverSpan(method, route);
    const token = serverSpan('POST', '/api/oauth/token');
    const me = serverSpan('GET', '/api/open/v1/me');

    const system = database.name === 'sqlite' ? 'sqlite' : 'postgresql';
    for (const request of [token, me]) {
      // pg's pool adds a span for taking a connection; a query's span has its statement.
      const queries = spans.filter((s) => attribute(s, 'db.system.name') === system && attribute(s, 'db.query.text') !== undefined && descendsFrom(s, request, byId));
      assert.ok(queries.length > 0, `${request.name} has query spans of ${system}`);
      for (const query of queries) assert.match(String(attribute(query, 'db.query.text')), /^\s*(select|insert|update|delete|with|begin|commit|savepoint|release)\b/i);
    }
    if (redisUrl) {
      const commands = spans.filter((s) => attribute(s, 'db.system.name') === 'redis' && spans.some((r) => r.kind === SPAN_KIND_SERVER && descendsFrom(s, r, byId)));
      assert.ok(commands.length > 0, 'Redis commands are spans under a request');
      for (const command of commands) assert.doesNotMatch(String(attribute(command, 'db.query.text')), /\s/, 'a command name, no argument');
    }

    // Nothing the run handled as a secret, nor a parameter value a query was given, is anywhere in what was exported.
    const exported = receiver.bodies.join('\n');
    for (const secret of secrets) {
      assert.equal(exported.includes(secret), false, `exported spans contain ${secret.slice(0, 12)}…`);
    }
    assert.doesNotMatch(exported, /"(url\.query|http\.request\.header\.[^"]*)"/);
  });
});
