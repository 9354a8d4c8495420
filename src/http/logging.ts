/**
 * Logger options: structured JSON (pino) that never carries a credential. Headers are not
 * logged at all, and query parameters that can hold a secret are replaced by `[redacted]`.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { clientAddress } from './client-address.js';
import { withoutUserinfo } from '../observability/request-target.js';

/**
 * `request_uri` opens a pushed request once (RFC 9126 7.1: it must not leak before use), and the
 * `pushed` marker carries that request on through sign-in and consent: either is a handle on it.
 */
const SECRET_PARAMETERS = new Set([
  'code', 'token', 'access_token', 'refresh_token', 'id_token', 'id_token_hint', 'client_secret',
  'password', 'code_verifier', 'state', 'nonce', '_csrf', 'request_uri', 'pushed',
]);

/**
 * Parameters whose value is an address of this site with a query of its own: the page a sign-in
 * or sign-up returns to is the authorization request, with its `state` and `nonce`.
 */
const NESTED_URL_PARAMETERS = new Set(['return_to']);

/**
 * The URL with the value of every secret-bearing query parameter redacted, in a nested address
 * too, and the userinfo of an absolute-form one (`withoutUserinfo`). The service nests one level
 * (`/login?return_to=/oauth/authorize?…`); a `return_to` inside
 * that one, or one that does not decode, is redacted whole. Decoding and encoding again at every
 * level of a request-chosen depth took time and log space that grew with its cube (a 15 kB
 * `?return_to=?return_to=…` held the event loop for 30 s and wrote a 4 MB line).
 */
export function redactUrl(sent: string, nested = false): string {
  const url = sent.startsWith('/') ? sent : withoutUserinfo(sent);
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = parameterName(eq === -1 ? pair : pair.slice(0, eq));
    if (SECRET_PARAMETERS.has(name)) return `${pair.slice(0, eq === -1 ? pair.length : eq)}=[redacted]`;
    if (eq === -1 || !NESTED_URL_PARAMETERS.has(name)) return pair;
    const value = nested ? undefined : decodeURIComponentOrUndefined(pair.slice(eq + 1).replace(/\+/g, ' '));
    return `${pair.slice(0, eq)}=${value === undefined ? '[redacted]' : encodeURIComponent(redactUrl(value, true))}`;
  });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/**
 * A query parameter's name as the redaction judges it: decoded (`%61ccess_token`), in lower case,
 * and cut before its first `[` (`token[a]`, `access_token[]`). The service reads none of those
 * spellings, but a parser that nests brackets, or a client, may take `token[a]` for `token`, and a
 * client that sends a secret so must not find it in the log.
 */
function parameterName(sent: string): string {
  const name = (decodeURIComponentOrUndefined(sent) ?? sent).toLowerCase();
  const bracket = name.indexOf('[');
  return bracket === -1 ? name : name.slice(0, bracket);
}

function decodeURIComponentOrUndefined(value: string): string | undefined {
  try { return decodeURIComponent(value); } catch { return undefined; }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type Parent = FastifyBaseLogger & { isLevelEnabled(level: Level): boolean };

/**
 * A request's logger that becomes pino's child logger on the first line it writes. Fastify gives
 * every request a child, and pino serializes a child's bindings (through redaction) when it is
 * made: a visible share of every API request (issue 8) that almost never logs a line.
 */
class RequestLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(private readonly parent: Parent, private readonly bindings: Bindings, private readonly options: ChildOptions) {}

  private get real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string { return this.#child?.level ?? this.parent.level; }
  set level(level: string) { this.real.level = level; }

  fatal(...args: unknown[]): void { this.write('fatal', args); }
  error(...args: unknown[]): void { this.write('error', args); }
  warn(...args: unknown[]): void { this.write('warn', args); }
  info(...args: unknown[]): void { this.write('info', args); }
  debug(...args: unknown[]): void { this.write('debug', args); }
  trace(...args: unknown[]): void { this.write('trace', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  private write(level: Level, args: unknown[]): void {
    if (this.parent.isLevelEnabled(level)) (this.real[level] as (...line: unknown[]) => void)(...args);
  }
}

/**
 * Runs what follows a committed change (its audit or security-log line, its notice mail): the
 * change is made and its answer must say so, so a failure here is the operators' error line
 * (`what`, with `context`), never answered in place of the change's page.
 */
export async function afterCommit(log: FastifyBaseLogger, what: string, context: Record<string, unknown>, work: () => unknown): Promise<void> {
  try {
    await work();
  } catch (error) {
    log.error({ err: error, ...context }, what);
  }
}

type ErrorSummary = { type: string; message: string; stack: string; code?: string | number; cause?: ErrorSummary };

/**
 * What a log line says of an error (pino's serializer for `err`): its type, message, stack and
 * code, and its cause's, never its other fields. Those may hold what a request carried: a URL
 * error's `input`, a database error's `detail` naming a row's values. pino's own serializer wrote
 * every enumerable field.
 */
export function errorSummary(error: unknown, depth = 0): ErrorSummary {
  if (!(error instanceof Error)) return { type: typeof error, message: '', stack: '' };
  const summary: ErrorSummary = { type: error.name, message: error.message, stack: error.stack ?? '' };
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') summary.code = code;
  // A few causes deep: the chain is the thrower's, and may loop.
  if (error.cause !== undefined && depth < 3) summary.cause = errorSummary(error.cause, depth + 1);
  return summary;
}

/** Fastify's `childLoggerFactory`: request loggers made on first use (see `RequestLogger`). */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new RequestLogger(logger as Parent, bindings, options) as unknown as FastifyBaseLogger;
}

export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers', 'res.headers', '*.password', '*.client_secret', '*.token'], remove: true },
    serializers: {
      // The address as sent (`originalUrl`), not the one the router was given (`routableUrl`).
      req: (req: { method: string; url: string; originalUrl?: string; ip: string; socket: { remoteAddress?: string } }) => ({ method: req.method, url: redactUrl(req.originalUrl ?? req.url), ip: clientAddress(req) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: errorSummary,
    },
  };
}
