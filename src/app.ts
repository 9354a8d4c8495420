/**
 * buildApp(deps): the Fastify application with every plugin and route. It never listens;
 * `main.ts` does, and tests call `inject()` or listen on a free port.
 */
import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { type DemoAppOptions, demoApp } from './demo-app/plugin.js';
import type { TrustProxy } from './config/settings.js';
import { KeysSecretError } from './core/errors.js';
import type { Deps } from './deps.js';
import { warnOfUntrustedForwarding } from './http/client-address.js';
import { endConnectionsOnClose } from './http/closing-connections.js';
import { routableUrl } from './http/console-paths.js';
import { loggerOptions, requestLogger } from './http/logging.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling, staticFileRefusal } from './http/plugins/errors.js';
import { apiSecurityHeaders, pageSecurityHeaders, registerSecurityHeaders } from './http/plugins/security-headers.js';
import { adminRoutes } from './http/routes/admin.js';
import { apiV1Routes } from './http/routes/api-v1/index.js';
import { communityRoutes } from './http/routes/community.js';
import { credentialRoutes } from './http/routes/credentials.js';
import { docsRoutes } from './http/routes/docs.js';
import { homeRoutes } from './http/routes/home.js';
import { languageRoutes } from './http/routes/language.js';
import { recoveryRoutes } from './http/routes/recovery.js';
import { logoutRoutes } from './http/routes/logout.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { oidcRoutes } from './http/routes/oidc.js';
import { oauthAuthorizeRoutes } from './http/routes/oauth-authorize.js';
import { oauthEndpointRoutes } from './http/routes/oauth-endpoints.js';
import { oauthRegistrationRoutes } from './http/routes/oauth-registration.js';
import { operationsRoutes } from './http/routes/operations.js';
import { securitySettingsRoutes } from './http/routes/security-settings.js';
import { settingsRoutes } from './http/routes/settings.js';
import { signInRoutes } from './http/routes/sign-in.js';
import { signUpRoutes } from './http/routes/sign-up.js';
import { userInfoRoutes } from './http/routes/userinfo.js';

/** Form and JSON bodies larger than this are refused with 413: nothing we accept is bigger but a post's form (`POST_FORM_BODY_LIMIT_BYTES`). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * INTERFACE section 8: a request sends its headers within 10 s and finishes within 30 s, else
 * Node answers 408 and closes the connection, so slow clients cannot hold sockets open. A socket
 * on which nothing moves for 75 s is closed: a client that stops reading its answer frees the
 * memory the answer holds. An idle keep-alive connection is kept 72 s (Fastify's default),
 * longer than a reverse proxy's usual 60 s, so the proxy is the one that closes it.
 */
export const REQUEST_TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, idleMs: 75_000, keepAliveMs: 72_000 } as const;

export interface AppOptions {
  /** Pino level; tests pass 'silent'. Defaults to the LOG_LEVEL setting. */
  logLevel?: string;
  /** Whether the start still checks a setting while the server listens (src/server.ts): /readyz answers 503 meanwhile. */
  startChecking?: (() => boolean) | undefined;
  /**
   * Settles once that check passed (src/server.ts; never, should it refuse the setting and the
   * process stop, exit 2): the workers that write (deliveries, flushes) start then, not before.
   */
  startChecked?: Promise<void> | undefined;
  /** The demo app's client credentials; without them /demo-app says it is not configured. */
  demoApp?: DemoAppOptions | undefined;
  /** Where log lines go (standard output by default); tests read them. */
  logStream?: { write(line: string): void };
  /** Tests shorten the request timeouts to see them act. */
  timeouts?: { headersMs: number; requestMs: number; idleMs: number; keepAliveMs: number };
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count becomes a function of the hop (proxy-addr walks
 * from the socket's peer, hop 0, back through X-Forwarded-For): Fastify itself treats a bare
 * number as "trust nothing".
 */
function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting === false ? false : [...setting];
}

/** See `routerOptions` below. */
const MAX_PARAM_LENGTH = 16_384;

/**
 * A scope written inline, with the name Fastify gives it in its plugin names, which traces carry
 * in span names and `hook.name` (@fastify/otel). Unnamed, Fastify names it by the first two lines
 * of its source, which the bundle `npm start` runs rewrites (`site.register(import_cookie2.default)`
 * there, `site.register(cookie)` unbundled): the same request would be traced under other names.
 */
function scope(name: string, plugin: FastifyPluginAsync): FastifyPluginAsync {
  return Object.assign(plugin, { [Symbol.for('fastify.display-name')]: name });
}

export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const timeouts = options.timeouts ?? REQUEST_TIMEOUTS;
  const https = deps.settings.baseUrl.startsWith('https:');
  const headers = { page: pageSecurityHeaders(https), api: apiSecurityHeaders(https) };
  const app = Fastify({
    // Node checks the timeouts every `connectionsCheckingInterval` (30 s by default): often
    // enough that a slow request is closed close to its limit.
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
      // Node's answer to an HTTP/1.1 request without Host is a bare 400; the service's, with the
      // rest of RFC 9112 3.2's rule, is in `registerErrorHandling`.
      requireHostHeader: false,
    },
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    logger: loggerOptions(options.logLevel ?? deps.settings.logLevel, options.logStream),
    childLoggerFactory: requestLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: fastifyTrustProxy(deps.settings.trustProxy),
    clientErrorHandler: clientErrorHandler(headers.api, timeouts),
    frameworkErrors: frameworkErrorHandler(headers),
    rewriteUrl: (request) => routableUrl(request.url ?? '/', request.method),
    // A parameter as long as the request line may be (Node's 16 KiB of headers bounds it): the
    // route's own schema refuses one too long. Fastify's default of 100 answered a bare 414 before
    // any hook, which told who is not staff which addresses under /admin take a parameter
    // (INTERFACE section 14: everything there is the not-found page to them).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  });
  app.decorate('deps', deps);
  // Every method Node hands to a request handler (all it parses but CONNECT) is one the router
  // takes, so the console's catch-all takes it behind its gate (INTERFACE section 14: everything
  // under /admin); a PROPFIND there gave staff the site's 404 page. Elsewhere such a method still
  // meets the not-found answer: a 405 where the path exists, as before.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
  // Node reads a socket's peer address at its first use and keeps it; read after the client has
  // hung up, it is gone. Read at accept, it is known for the connection's whole life, so a request
  // whose client resets mid-way is still counted, limited and logged under its own address
  // (clientAddress), not 'unknown'.
  app.server.on('connection', (socket: Socket) => { void socket.remoteAddress; });
  warnOfUntrustedForwarding(app.server, deps.settings.trustProxy, app.log);
  // A signing key this instance cannot open is logged once, with what to do. Every key it signs
  // with is opened before it serves, so it keeps them should another instance seal them later; a
  // database that does not answer yet only postpones that to the first request that needs them.
  deps.keys.reportTo(app.log);
  deps.database.reportTo(app.log);
  // A security-log line that cannot be written after its change is made is an error here, not the change's answer.
  deps.securityLog.reportTo(app.log);
  app.addHook('onReady', async () => { await deps.keys.unopenable().catch(() => undefined); });
  // The shared HMAC keys are read (made, on a new database) before serving too: no request then
  // writes one (on SQLite such a write waits for another instance's write lock), and an instance
  // keeps the keys it read should another seal them later (a KEYS_SECRET rollout). Keys it cannot
  // open refuse the start, as a sealed database refuses one in the start turn: another instance,
  // given KEYS_SECRET, sealed them after this one's turn (docs/operations.md, "KEYS_SECRET").
  app.addHook('onReady', async () => {
    await deps.sharedKeys.readAll().catch((error: unknown) => {
      if (error instanceof KeysSecretError) throw error;
      app.log.warn({ err: error }, 'the shared HMAC keys could not be read; the first request that needs one reads it');
    });
  });
  // Each listening instance delivers back-channel logouts, sends mail and marks hidden members'
  // posts; closing waits for their attempts to end, and for the work requests left running after their answers.
  // Not while the start still checks a setting (`startChecked`): an instance that may yet stop
  // for it (exit 2) sends no mail or logout, and writes nothing.
  deps.background.reportTo(app.log);
  let closing = false;
  const startWorkers = () => {
    if (closing) return;
    deps.logoutDeliveries.start(app.log);
    deps.mailDeliveries.start(app.log);
    deps.hiddenFlags.start(app.log);
    deps.countFlush.start(app.log);
  };
  app.addHook('onListen', async () => {
    if (options.startChecked === undefined) startWorkers();
    else void options.startChecked.then(startWorkers);
  });
  // Before the server stops taking connections and waits for the requests in flight. A request
  // waiting for a document's fetch to start is refused now rather than cut off at the grace's end.
  endConnectionsOnClose(app);
  app.addHook('preClose', (done) => {
    closing = true;
    deps.clientDocuments.close();
    done();
  });
  app.addHook('onClose', async () => { await Promise.all([deps.logoutDeliveries.stop(), deps.mailDeliveries.stop(), deps.hiddenFlags.stop(), deps.countFlush.stop(), deps.background.settled()]); });

  app.addHook('onResponse', (request, reply, done) => {
    // The staff console's overview counts every 429 the site answers (src/core/staff/figures.ts).
    if (reply.statusCode === 429) deps.figures.count('throttled', deps.clock.now());
    deps.metrics.observeHttp(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  registerErrorHandling(app, headers, options.startChecking);
  // The bearer-token APIs in scopes of their own: their answers carry only the API headers (issue 8),
  // and nothing of the site runs for them (issue 20): no cookie parsing or setting, no session, no
  // form parser of the site's (UserInfo and MCP keep their own); the bearer gate's hooks are theirs
  // (its check at onRequest, a token's use recorded at onSend; besides the metrics hook above,
  // shared by all).
  await app.register(apiV1Routes, { securityHeaders: headers.api });
  // The same API for agents (MCP), behind a gate of its own: its tokens' audience and challenges name it.
  await app.register(mcpRoutes, { securityHeaders: headers.api });
  await app.register(scope('userinfo', async (userInfo) => {
    // OpenID Connect Core 5.3.1 lets a client POST to UserInfo; a form body is read only to refuse a token in it.
    await userInfo.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });
    await userInfo.register(userInfoRoutes, { securityHeaders: headers.api });
  }));
  await app.register(credentialRoutes, { securityHeaders: headers.api });
  await app.register(oauthRegistrationRoutes, { securityHeaders: headers.api });
  // The OAuth endpoints answer JSON to client apps, which send no cookie: nor does the site's
  // scope run for them (its cookie hooks, the page headers: docs/performance.md, decision 41).
  await app.register(oauthEndpointRoutes, { securityHeaders: headers.api });
  await app.register(scope('site', async (site) => {
    await site.register(cookie);
    await site.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });
    registerSecurityHeaders(site, headers.page);
    // @fastify/static takes no route config: its route is marked a page here, so its own refusal
    // (`send`'s 403 for a path that climbs out of public/, `/static/../..`) is the site's error
    // page in the reader's language, as on every other address outside the API, not JSON, worded
    // as what it is (`staticFileRefusal`) by the error handler the plugin gives its route.
    site.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/static/')) return;
      route.config = { ...route.config, html: true };
      const handle = route.errorHandler;
      if (handle) route.errorHandler = function refused(error, request, reply) { return handle.call(this, staticFileRefusal(error) as FastifyError, request, reply); };
    });
    await site.register(fastifyStatic, {
      root: fileURLToPath(new URL('../public', import.meta.url)),
      prefix: '/static/',
      maxAge: '1h',
    });
    await site.register(operationsRoutes, { startChecking: options.startChecking });
    await site.register(signInRoutes);
    await site.register(homeRoutes);
    await site.register(languageRoutes);
    await site.register(recoveryRoutes);
    await site.register(signUpRoutes);
    await site.register(communityRoutes);
    await site.register(settingsRoutes);
    await site.register(securitySettingsRoutes);
    await site.register(demoApp, { demo: options.demoApp, words: deps.words });
    await site.register(oidcRoutes);
    await site.register(oauthAuthorizeRoutes);
    await site.register(logoutRoutes);
    await site.register(docsRoutes);
    await site.register(adminRoutes);
  }));
  return app;
}
