/**
 * The one error handler: an `OAuthError` becomes its RFC-shaped JSON (or an HTML page on a
 * page route); a malformed request becomes `invalid_request`; a database that cannot be reached,
 * or a signing key this instance cannot open, becomes 503 `temporarily_unavailable`; anything
 * else is logged and answered as a generic `server_error`, never with its message or stack.
 */
import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import { type Socket, isIPv6 } from 'node:net';
import { fastifyCookie } from '@fastify/cookie';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_NOT_ACTIVE, AccountUnusableError, KeysSecretError, OAuthError, SigningKeyDamagedError, type OAuthErrorCode, type Words } from '../../core/errors.js';
import { DEFAULT_LOCALE } from '../../core/locales.js';
import { CONSOLE_HEADERS, formPageOf, isConsolePath, pathOfTarget } from '../console-paths.js';
import { RouteMethods } from '../route-methods.js';
import { type Html, html } from '../views/html.js';
import { consoleErrorFrame } from '../views/admin.js';
import { type PageContext, errorPage } from '../views/layout.js';
import { listOf, rich } from '../views/words.js';
import { CORS_HEADERS } from './cors.js';
import type { HeaderSet } from './security-headers.js';
import { pageContext } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Errors on this route are shown as an HTML page rather than JSON. */
    html?: boolean;
    /** A catch-all that answers through the not-found handler (`reply.callNotFound()`): its pattern is no address. */
    notFound?: true;
  }
}

/** How long a client is told to wait before it tries again after a 503 (RFC 9110 10.2.3). */
const RETRY_AFTER_SECONDS = '5';

/** A 503 `temporarily_unavailable` (RFC 6749 4.1.2.1) the client may try again after Retry-After: nothing was done. */
export function brieflyUnavailable(): OAuthError {
  return new OAuthError('temporarily_unavailable', 'The service is briefly unavailable; try again shortly.', {
    headers: { 'retry-after': RETRY_AFTER_SECONDS },
  });
}

/**
 * Errors of a backend that cannot serve right now but may soon, answered 503 with Retry-After:
 * unreachable or restarting (sockets, PostgreSQL classes 08 and 57P), out of disk or of
 * connections (PostgreSQL 53100, 53300), SQLite locked by another process or its file system full
 * (SQLITE_FULL: SQLite undoes the failed statement or the whole transaction, and the caller's
 * transaction is rolled back). The rest of class 53 (out of memory, a configured limit such as
 * `temp_file_limit`) comes of one query and repeats with it: a 500 and its own error line.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006',
  '53100', '53300', 'SQLITE_BUSY', 'SQLITE_FULL',
  // A statement PostgreSQL ended at `statement_timeout` (src/storage/database.ts): a lock held too long.
  '57014',
]);

/** Whether the error means the database (or another backend) cannot serve right now. */
export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // pg refuses a query on a connection it has lost ("…has encountered a connection error and is not
  // queryable"), such as the rollback of a transaction whose connection died under it.
  // pg's own `query_timeout` ("Query read timeout"): a server that stopped answering.
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|and is not queryable|Query read timeout/.test(message);
}

/** During an outage, at most one 'backend unavailable' line per this many ms and app, with a count of those left out. */
export const UNAVAILABLE_LOG_INTERVAL_MS = 10_000;
const unavailableLogs = new WeakMap<object, { lastAt: number; leftOut: number }>();

/**
 * Logs that the database (or Redis) could not be reached: the first refusal of an outage with
 * its error, then one line per `UNAVAILABLE_LOG_INTERVAL_MS` saying how many refusals it left out,
 * not a line and a stack per request while every request fails.
 */
function logUnavailable(request: FastifyRequest, error: unknown): void {
  const key = request.server.deps;
  const now = key.clock.now();
  const state = unavailableLogs.get(key);
  if (state && now - state.lastAt < UNAVAILABLE_LOG_INTERVAL_MS) {
    state.leftOut += 1;
    return;
  }
  request.log.error({ err: error, ...(state ? { leftOut: state.leftOut } : {}) }, 'backend unavailable');
  unavailableLogs.set(key, { lastAt: now, leftOut: 0 });
}

/** The words of a page that is not there: an address no route takes, or a member or post a page reads that does not exist. */
export const NOTHING_HERE: Words = { key: 'errors.nothingHere' };

/** An address that names nothing (RFC 9110 15.5.5): its page tells it in the reader's language, nothing left in English. */
export function noSuchPage(): OAuthError {
  return new OAuthError('not_found', 'No such page or endpoint.', { words: NOTHING_HERE });
}

/** What a refused address under /static tells a person: no file of the site is there. */
const NO_SITE_FILE: Words = { key: 'errors.noSiteFile' };

/**
 * `send`'s refusal of an address under /static (@fastify/static) in words saying what it is: a
 * `..` segment that climbs out of public/ (403: understood and refused, RFC 9110 15.5.4) or a NUL,
 * which no file name holds (400); a Range that begins past the file's end (416, RFC 9110 15.5.17,
 * with the `Content-Range: bytes *` + `/size` that `send` gives it, as 14.4 asks), or a condition
 * (If-Match, If-Unmodified-Since) the file no longer meets (412, RFC 9110 13.1.1 and 13.1.4).
 * Left to the generic 4xx, each said the request "could not be understood", and its page in
 * Chinese told the reader to go back to an app that sent them.
 */
export function staticFileRefusal(error: unknown): unknown {
  const refused = error as { statusCode?: unknown; headers?: Record<string, string> } | null;
  switch (refused?.statusCode) {
    case 403: return new OAuthError('invalid_request', 'The address leads out of the folder of the site\'s files.', { status: 403, words: NO_SITE_FILE });
    case 400: return new OAuthError('invalid_request', 'The address holds a NUL character, which no file name has.', { status: 400, words: NO_SITE_FILE });
    case 416: {
      const range = refused?.headers?.['Content-Range'];
      return new OAuthError('invalid_request', 'The part of the file asked for (Range) begins past its end: the file is shorter, as Content-Range says.', {
        status: 416, words: { key: 'errors.rangeNotSatisfiable' }, headers: range === undefined ? {} : { 'content-range': range },
      });
    }
    case 412: return new OAuthError('invalid_request', 'The file is no longer the one the request\'s condition (If-Match or If-Unmodified-Since) names: ask for it again without that condition.', {
      status: 412, words: { key: 'errors.preconditionFailed' },
    });
    default: return error;
  }
}

/** Turns any thrown value into the `OAuthError` the client may see. */
export function toClientError(error: unknown, request: FastifyRequest): OAuthError {
  if (error instanceof OAuthError) return error;
  // A signed-in account left `active` while its form was on its way: nothing was made for it.
  if (error instanceof AccountUnusableError) return new OAuthError('access_denied', ACCOUNT_NOT_ACTIVE);
  // A signing key or shared HMAC key this instance cannot open (KEYS_SECRET missing or another one
  // than the keys were sealed with): another instance may well open it, so the client is told to
  // try again, in the RFC 6749 5.2 shape, and nothing was consumed (the signature rolls its
  // transaction back). The key ring has logged it once, saying what to do; a line per request
  // would flood the log.
  if (error instanceof KeysSecretError) {
    return new OAuthError('temporarily_unavailable', 'The service cannot open its keys right now; try again shortly.', {
      headers: { 'retry-after': RETRY_AFTER_SECONDS },
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  // A path parameter that fails its schema (an id that is not canonical decimal, `row-id.ts`)
  // names no page or resource: the address is not there (RFC 9110 15.5.5), as for any other.
  if (fastifyError.validation && fastifyError.validationContext === 'params') return noSuchPage();
  if (fastifyError.validation) {
    return new OAuthError('invalid_request', `Invalid request: ${fastifyError.message ?? 'malformed parameters'}`);
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const description = fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'The request body is too large.'
      : fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'Unsupported content type.'
      : fastifyError.code === 'FST_ERR_BAD_URL' ? unreadableAddress(request.url)
      : 'The request could not be understood.';
    return new OAuthError('invalid_request', description, { status });
  }
  if (isUnavailable(error)) {
    logUnavailable(request, error);
    return brieflyUnavailable();
  }
  // Written by `errorSummary`, as every line's error: its other fields may hold what the request
  // carried (a Node URL error's `input`, the address or field it was given). A damaged stored
  // signing key fails so on every instance until it is replaced; the key ring has logged it once,
  // naming the key and what to do, and a line per request would flood the log.
  if (!(error instanceof SigningKeyDamagedError)) request.log.error({ err: error }, 'unexpected error');
  return new OAuthError('server_error', 'The server could not complete the request.');
}

/** A target in absolute form that names nothing this server serves: no http or https URL with a host. */
const NO_HTTP_TARGET = 'The request target is in absolute form but is no http or https URL with a host and without a fragment (RFC 9112 3.2.2).';

/**
 * What is wrong with an address the router cannot read (Fastify's FST_ERR_BAD_URL), by
 * `request.url` (`routableUrl`): a path, an absolute-form URL's too, holds a malformed
 * percent-escape; a target left in absolute form is no URL the router takes (RFC 9112 3.2.2:
 * `http://h:x@/` has no host, `http://h/#f` a fragment), whatever escapes it holds.
 */
function unreadableAddress(url: string): string {
  return url.startsWith('/') ? 'The request address is not well-formed (a malformed percent-escape).' : NO_HTTP_TARGET;
}

/**
 * What an error page tells a person in their language, by the error's code, unless the error
 * carries words of its own, which every page shows, an English one too; the description stays
 * English (RFC 6749 5.2), shown as is on an English page of an error without words of its own
 * and, on a page in another language, as details.
 */
const PAGE_WORDS: Partial<Record<OAuthErrorCode, Words>> = {
  invalid_request: { key: 'errors.invalidRequest' },
  // What an app nobody answers for meets on this site's page instead of its redirect URI (RFC 9700 4.11.2).
  unsupported_response_type: { key: 'errors.invalidRequest' },
  request_not_supported: { key: 'errors.invalidRequest' },
  invalid_target: { key: 'errors.invalidRequest' },
  invalid_scope: { key: 'errors.invalidScope' },
  login_required: { key: 'errors.interactionRequired' },
  consent_required: { key: 'errors.interactionRequired' },
  interaction_required: { key: 'errors.interactionRequired' },
  invalid_client: { key: 'errors.unknownApp' },
  unauthorized_client: { key: 'errors.unknownApp' },
  access_denied: { key: 'errors.accessDenied' },
  rate_limited: { key: 'errors.rateLimited' },
  server_error: { key: 'errors.serverError' },
  temporarily_unavailable: { key: 'errors.unavailable' },
};

/**
 * An error's words in the staff console, for staff past its gate: what its pages and forms meet,
 * never the member's advice to go back to an app that sent them; any other code is the generic
 * words. Its page leads back to the page the form was on, else to the console (`consoleWayBack`).
 */
const CONSOLE_PAGE_WORDS: Partial<Record<OAuthErrorCode, Words>> = {
  invalid_request: { key: 'errors.consoleInvalidRequest' },
  rate_limited: { key: 'errors.rateLimited' },
  server_error: { key: 'errors.serverError' },
  temporarily_unavailable: { key: 'errors.unavailable' },
};

/**
 * A console error page's way back: to the page of the form the request was sent from
 * (`formPageOf`), else to the console; to the console too when what the form was about is gone
 * (404), as its page is.
 */
function consoleWayBack(request: FastifyRequest, error: OAuthError, t: PageContext['t']): { href: string; words: string } {
  const formPage = error.status === 404 ? undefined : formPageOf(request);
  return formPage === undefined ? { href: '/admin', words: t.text('admin.backToConsole') } : { href: formPage, words: t.text('admin.back') };
}

/**
 * An error page's heading, for a route's error and an address no route takes alike: server
 * trouble, a page that is not there, or a refusal (an action on something already gone among
 * them: its page is there).
 */
function errorHeading(status: number, pageMissing: boolean): string {
  // RFC 9110 15.6.6: a 505 is the request's version, no trouble of the server's; its heading says so.
  return status === 505 ? 'errors.versionNotSupported' : status >= 500 ? 'errors.somethingWentWrong' : pageMissing ? 'errors.notFound' : 'errors.didNotWork';
}

/**
 * The error page of `error`: its heading and words in the reader's language; in the staff console,
 * for staff, its own words in the console's layout and the way back to it (the gate sets
 * `request.staff`, so no one else learns from an error that the console is there).
 */
async function errorPageOf(request: FastifyRequest, reply: FastifyReply, error: OAuthError): Promise<Html> {
  const context = await pageContext(request, reply);
  const { t } = context;
  const { staff } = request;
  const inConsole = staff !== undefined;
  // In the console, its page: its layout and the way back to it.
  const framing = staff === undefined ? {}
    : { back: consoleWayBack(request, error, t), frame: consoleErrorFrame(context, staff, request.url.split('?')[0]!) };
  // A read of a member or post that does not exist is a missing page; a form sent about one is a refused action.
  const pageMissing = error.status === 404 && (request.method === 'GET' || request.method === 'HEAD');
  const heading = t.text(errorHeading(error.status, pageMissing));
  // The error's own words say what its description says, for the member who reads the page, in
  // English too: the description is the developer's (a /static refusal's names Range and
  // If-Match), and on a page in Chinese nothing is left to read in English.
  if (error.words) return errorPage(context, heading, t.text(error.words.key, error.words.values), framing);
  if (t.locale === DEFAULT_LOCALE) return errorPage(context, heading, error.description, framing);
  const words = pageMissing ? NOTHING_HERE
    : (inConsole ? CONSOLE_PAGE_WORDS : PAGE_WORDS)[error.code] ?? { key: 'errors.generic' };
  // Words of the error's kind only: the description below, for the app's developer on the site's
  // pages, and in the console, where staff are no developers, named as the error's own untranslated message.
  const summary = t.text(inConsole ? 'errors.untranslatedMessage' : 'errors.details');
  return errorPage(context, heading, t.text(words.key), { details: { summary, text: error.description }, ...framing });
}

export async function sendError(error: OAuthError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.code(error.status).headers(error.headers).header('cache-control', 'no-store');
  if (request.routeOptions.config?.html) return sendPageOrJson(request, reply, error, () => errorPageOf(request, reply, error));
  return reply.send({ error: error.code, error_description: error.description });
}

/**
 * Sends `error`'s page, made by `makePage`, for a route's error and a request no route took alike.
 * The page reads what the request carried (its cookies, its language) again: should that fail,
 * the error goes as JSON (RFC 6749 5.2), the same refusal, with `jsonHeaders` when given. Thrown
 * from a route's error handler, it reached Fastify's own, a 500 in Fastify's shape naming the
 * failure (`{"statusCode":500,"code":"ERR_INVALID_URL",…}`); from the not-found handler, a 500
 * `server_error` in place of its 404; from the router's refusal, which Fastify does not await, an
 * unhandled rejection that ends a Node 20 process. The line names the failure as every line does
 * (`errorSummary`: never the fields that may hold what the request carried).
 */
async function sendPageOrJson(request: FastifyRequest, reply: FastifyReply, error: OAuthError, makePage: () => Promise<Html>, jsonHeaders?: HeaderSet): Promise<FastifyReply> {
  let page: Html;
  try {
    page = await makePage();
  } catch (failure) {
    request.log.error({ err: failure }, 'the error page could not be made; answered in JSON');
    if (reply.sent) return reply;
    if (jsonHeaders !== undefined) reply.headers(jsonHeaders);
    return reply.send({ error: error.code, error_description: error.description });
  }
  return reply.type('text/html; charset=utf-8').send(page.value);
}

/**
 * The answer to a request no route took: not found, a method the path does not take (405), or an
 * address Fastify's router cannot decode (a malformed percent-escape). JSON under the API's
 * prefixes, a page in the reader's language elsewhere (in JSON should the page fail), by the path
 * of the target (`pathOfTarget`: an absolute-form one the router refused too). `headers` are the
 * security headers of JSON and of page answers: such a request passed through no scope's hooks,
 * so it gets them here.
 */
function unroutedAnswer(headers: { api: HeaderSet; page: HeaderSet }) {
  const jsonHeaders: HeaderSet = { ...headers.api, ...CORS_HEADERS };
  // `page`: what the page says, for an error without words of its own (`OAuthError.words`).
  return async (request: FastifyRequest, reply: FastifyReply, error: OAuthError, page?: (t: PageContext['t']) => string | Html): Promise<FastifyReply> => {
    const path = pathOfTarget(request.url);
    const wantsJson = path.startsWith('/api/') || path.startsWith('/.well-known/');
    // A browser app that calls a wrong path under the JSON endpoints reads the error instead of a
    // network error; nothing there reads the session cookie (INTERFACE section 3).
    reply.code(error.status).headers(wantsJson ? jsonHeaders : headers.page).headers(error.headers).header('cache-control', 'no-store');
    if (isConsolePath(path)) reply.headers(CONSOLE_HEADERS);
    if (wantsJson) return reply.send({ error: error.code, error_description: error.description });
    return sendPageOrJson(request, reply, error, async () => {
      // The cookie plugin parses cookies in the site's scope only (the API never reads one); a
      // request no route matched passed through no scope, so the page's cookies are read here.
      request.cookies ??= fastifyCookie.parse(request.headers.cookie ?? '');
      const context = await pageContext(request, reply, { mintCsrf: false });
      const heading = context.t.text(errorHeading(error.status, error.status === 404));
      const { t } = context;
      const words = error.words ? t.text(error.words.key, error.words.values) : page ? page(t) : t.text('errors.generic');
      return errorPage(context, heading, words);
    }, jsonHeaders);
  };
}

/**
 * Fastify's `frameworkErrors` (an address its router cannot decode, such as a malformed
 * percent-escape): answered as every other malformed request is (`toClientError`: INTERFACE
 * section 6's `invalid_request`, the security headers, no-store), not with Fastify's own JSON,
 * which echoed the path and carried no security header. In the staff console it is the not-found
 * answer, as everything there no route gave (INTERFACE section 14): only a parameter longer than the
 * router takes comes here from there, since `routableUrl` escapes a malformed address for the
 * console's catch-all.
 */
export function frameworkErrorHandler(headers: { api: HeaderSet; page: HeaderSet }): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const answer = unroutedAnswer(headers);
  return (error, request, reply) => {
    // The router refuses before any hook: a request breaking the Host rule, or expecting what this
    // server does not meet, is refused for that first here too, as every other is (the first
    // `onRequest` hook), and so closes its connection; the bad address alone does not (`BAD_HOST`).
    const refusal = refusalBeforeRouting(request.raw)
      ?? (isConsolePath(pathOfTarget(request.url)) ? noSuchPage() : toClientError(error, request));
    // Fastify awaits no promise of this handler: a failure left in it is an unhandled rejection,
    // which ends a Node 20 process. The page's failure is answered in JSON (`sendPageOrJson`);
    // nothing else is known to fail, and should it, it is logged, not left to end the process.
    return answer(request, reply, refusal, (t) => t.text('errors.invalidRequest')).catch((failure: unknown) => {
      request.log.error({ err: failure }, 'a request the router refused could not be answered');
      return reply;
    });
  };
}

/**
 * RFC 3986 3.2.2 and 3.2.3, which RFC 9112 3.2 takes for Host: a name or IPv4 address, or an IP
 * literal in brackets, then an optional port; or nothing, for a target with no authority.
 */
const HOST_VALUE = /^(?:\[(?:(?<ipv6>[\dA-Fa-f:.]+)|v[\dA-Fa-f]+\.[\w.~!$&'()*+,;=:-]+)\]|(?:[\w.~!$&'()*+,;=-]|%[\dA-Fa-f]{2})*)(?::(?<port>\d*))?$/;

/**
 * The largest TCP port (RFC 9293 3.1): RFC 3986's grammar takes any digits, but no server listens
 * past it. The same authority in a target in absolute form (`GET http://host:99999/`) was already
 * refused, as the URL parser refuses it; in Host it was served (attack106).
 */
const MAX_PORT = 65_535;

/**
 * RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to any request
 * with more than one Host field line or a Host that is not a host. Node's own check
 * (`requireHostHeader`, off in `app.ts`) answered the first with a bare 400, and let the others
 * through to be served by the first Host; Node keeps only the first in `headers`. An empty host
 * (`Host:`, `Host: :3000`) names no authority, and every URL this server serves has one: the
 * target URI made of it (RFC 9112 3.3) is an http URI with an empty host, which a recipient MUST
 * reject as invalid (RFC 9110 4.2.1). It was served as if it named this server. A target in
 * absolute form carries its own authority, and its Host is ignored (RFC 9112 3.2.2).
 * `originalUrl`: the target as sent, once the router was given another (`routableUrl`).
 */
export function breaksHostRule(message: Pick<IncomingMessage, 'rawHeaders' | 'headers' | 'httpVersionMinor' | 'url'> & { originalUrl?: string }): boolean {
  let fields = 0;
  const raw = message.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') fields += 1;
  }
  if (fields !== 1) return fields > 1 || message.httpVersionMinor >= 1;
  const value = message.headers.host!;
  const host = HOST_VALUE.exec(value);
  if (host === null) return true;
  const { ipv6, port } = host.groups!;
  if ((ipv6 !== undefined && !isIPv6(ipv6)) || (port !== undefined && port !== '' && Number(port) > MAX_PORT)) return true;
  // A host is a name, an address or an IP literal; the grammar's only other start is the port's `:`.
  return (value === '' || value.startsWith(':')) && !inAbsoluteForm(message.originalUrl ?? message.url ?? '');
}

/** Whether a request target as sent is in absolute form (RFC 9112 3.2.2): neither a path (origin form) nor `*`. */
function inAbsoluteForm(target: string): boolean {
  return !target.startsWith('/') && !target.startsWith('*');
}

/**
 * RFC 9112 3.2: a request target is an absolute path (origin form), an absolute URI, an authority
 * (CONNECT only) or `*` (OPTIONS only, the server as a whole). Node's parser lets any target that
 * starts with `*` through: `GET *` was the home page and `GET *login` the sign-in page.
 */
export function breaksTargetRule(message: Pick<IncomingMessage, 'url' | 'method'>): boolean {
  const url = message.url ?? '';
  return url.startsWith('*') && (url !== '*' || message.method !== 'OPTIONS');
}

/**
 * All close the connection: a body the request announced is not read. A bad address alone (a
 * malformed percent-escape) does not: its request line and fields were read whole, so where its
 * body ends is known, and Node reads and drops that body before the next request on the connection.
 */
const BAD_HOST = new OAuthError('invalid_request', 'The request must carry one Host field: a host and an optional port (RFC 9112 3.2).', { headers: { connection: 'close' } });
const BAD_TARGET = new OAuthError('invalid_request', 'The request target must be a path, an absolute URL, or * for OPTIONS (RFC 9112 3.2).', { headers: { connection: 'close' } });
/**
 * RFC 9112 2.3 and RFC 9110 15.6.6: this syntax is HTTP/1.x's; Node's parser also takes `HTTP/2.0`
 * (and `HTTP/0.9`) on it, which was served as HTTP/1.1, and an HTTP/2.0 request without Host passed
 * the Host rule (it asks for Host from HTTP/1.1 on).
 */
const UNSUPPORTED_VERSION = new OAuthError('invalid_request', 'This server speaks HTTP/1.0 and HTTP/1.1 on this connection (RFC 9112 2.3).', {
  status: 505, headers: { connection: 'close' }, words: { key: 'errors.useHttp1' },
});
const UNMET_EXPECTATION = new OAuthError('invalid_request', 'This server meets no expectation but 100-continue (RFC 9110 10.1.1).', { status: 417, headers: { connection: 'close' } });

/**
 * Requests whose Expect field asks for anything but 100-continue. Node hands one to
 * 'checkExpectation', or to 'checkContinue' when any member of it reads 100-continue
 * (`100-continue, foo` too); both listeners (`registerErrorHandling`) note it here and hand it on.
 */
const unmetExpectations = new WeakSet<IncomingMessage>();

/** A member of an Expect list (RFC 9110 5.6.1) that is 100-continue, in any case, or empty (5.6.1.2: a recipient accepts those). */
const CONTINUE_MEMBER = /^[\t ]*(?:100-continue)?[\t ]*$/i;

/** Whether an Expect field asks for nothing but 100-continue (RFC 9110 10.1.1), or for nothing at all. */
function expectsOnlyContinue(expect: string): boolean {
  return expect.split(',').every((member) => CONTINUE_MEMBER.test(member));
}

/**
 * The refusal of a request before any route or gate, the first that applies: a version not
 * HTTP/1.x, the Host rule broken, a target that starts with `*` but OPTIONS', an expectation not met.
 */
function refusalBeforeRouting(message: IncomingMessage): OAuthError | undefined {
  return message.httpVersionMajor !== 1 ? UNSUPPORTED_VERSION : breaksHostRule(message) ? BAD_HOST
    : breaksTargetRule(message) ? BAD_TARGET : unmetExpectations.has(message) ? UNMET_EXPECTATION : undefined;
}

/** The one error handler and the not-found answer. */
/** The probes (src/http/routes/operations.ts), answered while the start checks a setting (`registerErrorHandling`). */
const PROBES: ReadonlySet<string | undefined> = new Set(['/healthz', '/readyz']);

/**
 * `startChecking`: whether the start still checks REDIS_URL (Redis LOADING at start,
 * src/server.ts), the instance not ready. It may yet stop then, exit 2, and until then it would
 * count rate limits and sign-in failures in memory, where that stop loses them; so every request
 * but the probes is answered 503 `temporarily_unavailable` with Retry-After, nothing done, by
 * the first hook, before the bearer gate counts or any scope reads a cookie. The load balancer
 * sends no traffic then (/readyz 503): this holds for a client that reaches the instance itself.
 */
export function registerErrorHandling(app: FastifyInstance, headers: { api: HeaderSet; page: HeaderSet }, startChecking?: () => boolean): void {
  const answer = unroutedAnswer(headers);
  // RFC 9110 10.1.1: Node hands a request expecting anything but 100-continue to
  // 'checkExpectation', and with no listener there answered it a bare 417 itself. Handed on as a
  // request (as Node hands on one it met), it is refused by the hook below in the service's shape.
  // A field with no member (`Expect:`, `Expect: ,`) asks for nothing (RFC 9110 5.6.1.2), and is
  // served as a request without it: Node hands it here too.
  app.server.on('checkExpectation', (message: IncomingMessage, response: ServerResponse) => {
    if (!expectsOnlyContinue(message.headers.expect ?? '')) unmetExpectations.add(message);
    app.server.emit('request', message, response);
  });
  // Node hands here one whose Expect has a member reading 100-continue, and with no listener
  // answered `100 Continue` itself, `100-continue, foo` too. RFC 9110 10.1.1 allows 417 for an
  // expectation other than 100-continue: such a list is refused as one without 100-continue is,
  // before its client sends the body; only 100-continue alone is met, as Node met it.
  app.server.on('checkContinue', (message: IncomingMessage, response: ServerResponse) => {
    if (!expectsOnlyContinue(message.headers.expect!)) unmetExpectations.add(message);
    // A request refused before any route (a bad Host, a version not HTTP/1.x) has its connection
    // closed, its body unread: no `100 Continue` asks its client to send that body.
    else if (refusalBeforeRouting(message) === undefined) response.writeContinue();
    app.server.emit('request', message, response);
  });
  // The first hook of every route and of the not-found handler, so nothing else runs for such a
  // request; written with `done` so the requests that pass, all but these, cost no promise.
  app.addHook('onRequest', (request, reply, done) => {
    const refusal = refusalBeforeRouting(request.raw)
      ?? (startChecking?.() && !PROBES.has(request.routeOptions.url) ? brieflyUnavailable() : undefined);
    if (refusal === undefined) {
      done();
      return;
    }
    answer(request, reply, refusal, (t) => t.text(PAGE_WORDS[refusal.code]!.key)).catch(done);
  });
  const methods = new RouteMethods();
  app.addHook('onRoute', (route) => {
    if (!route.config?.notFound) methods.add(route.url, route.method);
  });
  const notFound = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // RFC 9110 9.3.7: `OPTIONS *` asks about the server as a whole, no resource (RFC 9112 3.2.4):
    // the methods it supports, OPTIONS among them, and no body; the API's security headers, as an
    // answer no browser renders.
    if (request.url === '*' && request.method === 'OPTIONS') {
      return reply.code(204).headers(headers.api).header('allow', methods.ofServer().join(', ')).send();
    }
    // A target in absolute form of another scheme (`GET ftp://host/`, `GET
    // foo://bar/api/open/v1/me`), which the router takes as a path that no route has: no
    // resource of this server, whose every URL is http or https with a host (RFC 9110 4.2, 7.4;
    // RFC 9112 3.2.2). It was the 404 of a page that does not exist; it is refused as the
    // router's absolute-form refusals are, by the path it names (`pathOfTarget`): the console's
    // not-found answer under /admin. (One without `//`, `mailto:x`, Node's parser refuses itself.)
    if (!request.url.startsWith('/')) {
      return answer(request, reply, isConsolePath(pathOfTarget(request.url)) ? noSuchPage() : new OAuthError('invalid_request', NO_HTTP_TARGET),
        (t) => t.text('errors.invalidRequest'));
    }
    // RFC 9110 15.5.6: a path that exists, asked with a method it does not take, is 405 with
    // `Allow`. A route that takes the method and still found nothing (a static file that is not
    // there) is a 404.
    // The staff console tells no one who is not staff which of its addresses exist (INTERFACE
    // section 14): every answer there that no route gave is a 404, whatever the method.
    const allowed = isConsolePath(request.url) ? [] : methods.of(request.url);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const error = new OAuthError('invalid_request', `This address takes ${allowed.join(', ')}, not ${request.method}.`, { status: 405, headers: { allow: allowed.join(', ') } });
      return answer(request, reply, error, (t) => rich(t, 'errors.methodNotAllowed', { allowed: listOf(t, allowed.map((m) => html`<code>${m}</code>`)), method: html`<code>${request.method}</code>` }));
    }
    return answer(request, reply, noSuchPage());
  };
  app.setNotFoundHandler(notFound);
  // A request no route takes whose body Fastify could not read (malformed JSON, a QUERY without
  // Content-Type, a media type it cannot parse) is answered as any other request no route takes:
  // what is not there is not there whatever was sent to it (RFC 9110 15.5.5). Its 400 in JSON, in
  // English on a page's address too, told an address under /admin, which the console's gate
  // answers before any body is read, from one that does not exist (INTERFACE section 14).
  // So is one to a catch-all that is no address (`notFound` in its config): the API's and MCP's
  // answer as the not-found handler does; the console's, which only staff pass, with its own
  // not-found page in the console's frame.
  app.setErrorHandler(async (error, request, reply) => {
    if (!isUnreadBody(error) || !(request.is404 || request.routeOptions.config?.notFound === true)) return sendError(toClientError(error, request), request, reply);
    return request.staff === undefined ? notFound(request, reply) : sendError(noSuchPage(), request, reply);
  });
}

/** A body Fastify refused to read before any handler ran: a client error of its own (4xx), not one a route threw. */
function isUnreadBody(error: unknown): boolean {
  if (error instanceof OAuthError) return false;
  const status = (error as Partial<FastifyError>).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/**
 * The answer to a request Node's HTTP server refuses before any route sees it (Fastify's
 * `clientErrorHandler`): headers or body that did not arrive in time (INTERFACE section 8), headers
 * too large, bytes that are not HTTP. Fastify's own answer has a shape of its own; this one is
 * INTERFACE section 6's, with `Cache-Control: no-store`, the API's security headers and CORS, since
 * the path is not known yet and a browser app calling the token endpoint must be able to read it
 * (it reveals nothing to any origin). The connection is closed after it, as Node does, and after
 * the answers to the whole requests received before the refused bytes.
 */
export function clientErrorHandler(headers: HeaderSet, timeouts: { headersMs: number; requestMs: number }): (error: NodeJS.ErrnoException, socket: Socket) => void {
  const answer = (status: number, description: string): string => {
    const body = JSON.stringify({ error: 'invalid_request', error_description: description });
    const fields = {
      'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store', connection: 'close', ...headers, ...CORS_HEADERS,
    };
    const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(fields).map(([name, value]) => `${name}: ${value}`)];
    return `${head.join('\r\n')}\r\n\r\n${body}`;
  };
  const late = answer(408, `The request did not arrive in time: send the headers within ${timeouts.headersMs / 1000} s and the whole request within ${timeouts.requestMs / 1000} s.`);
  const tooLarge = answer(431, 'The request headers are too large.');
  const malformed = answer(400, 'The request is not well-formed HTTP/1.1.');
  // Sockets whose refusal waits for the answers before it. Node refuses every packet that arrives
  // after the bad bytes again, and its request timeout comes too: one wait each would keep a
  // closure per packet on the answer in flight for as long as its client takes to read it.
  const waiting = new WeakSet<Socket>();
  const refuse = (error: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has no one left to answer (Node's documentation of 'clientError'); a
    // refusal that waits is written once.
    if (error.code === 'ECONNRESET' || socket.destroyed || waiting.has(socket)) return;
    // Node's own field: the answer being written on this socket; those of later pipelined requests wait behind it.
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
    // Bytes after a request that closes its connection (`Connection: close`, HTTP/1.0): RFC 9112
    // 9.6, that request is answered, then the connection closed, and nothing after it is processed
    // or refused. Its answer closes the socket once sent; destroyed here, it was lost and this 400
    // sent in its place, after the request had been carried out (attack100).
    if (error.code === 'HPE_CLOSED_CONNECTION') {
      if (inFlight === undefined) socket.destroy();
      return;
    }
    // Bytes after a whole request: RFC 9112 9.3.2, pipelined requests are answered in the order
    // received, so it (and any whole one after it) is answered first, then the refusal. Written
    // at once, the 400 took the place of that answer, after the request had been carried out (attack100).
    if (inFlight?.req.complete) {
      waiting.add(socket);
      inFlight.once('finish', () => {
        waiting.delete(socket);
        refuse(error, socket);
      });
      return;
    }
    // Nothing in flight, or the refused bytes are its request's own (its body): as Node's own
    // handler, never a second status line into an answer that has begun.
    if (socket.writable && !inFlight?.headersSent) {
      socket.write(error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? late : error.code === 'HPE_HEADER_OVERFLOW' ? tooLarge : malformed);
    }
    socket.destroy(error);
  };
  return refuse;
}
