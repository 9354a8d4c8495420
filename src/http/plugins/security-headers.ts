/**
 * The security headers of every answer, computed once at start-up and copied onto each reply
 * with one hook. @fastify/helmet rebuilt helmet's middleware, parsing every directive, on every
 * request: a tenth of the CPU time of a refused API request (issue 8, docs/performance.md).
 * - Pages get helmet's set (helmet stays the source of those values).
 * - The JSON APIs get the set OWASP's REST Security Cheat Sheet lists for API answers: nothing
 *   in them is a document a browser renders, so the page-only headers would be bytes on every
 *   request for no protection.
 */
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

export type HeaderSet = Readonly<Record<string, string>>;

/** HSTS as helmet sends it. Only https deployments pin https: on http://localhost it would break the demo. */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/** The headers helmet's middleware would set with these options, by lower-case name. */
export function helmetHeaders(options: HelmetOptions): HeaderSet {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number) { headers[name.toLowerCase()] = String(value); },
    removeHeader(name: string) { delete headers[name.toLowerCase()]; },
  };
  let failure: unknown;
  helmet(options)({} as never, recorder as never, (error?: unknown) => { failure = error; });
  if (failure) throw failure;
  return Object.freeze(headers);
}

/** Pages: no inline script, no framing, no referrer across sites. */
export function pageSecurityHeaders(https: boolean): HeaderSet {
  return helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
        // No form-action: the consent form's answer is a redirect to the client's own site.
      },
    },
    strictTransportSecurity: https,
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on form posts,
    // which the CSRF origin check refuses; cross-site navigations still carry no Referer.
    referrerPolicy: { policy: 'same-origin' },
    frameguard: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
}

/** JSON answers: never sniffed as another type, never framed, never loading anything. */
export function apiSecurityHeaders(https: boolean): HeaderSet {
  return Object.freeze({
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(https ? { 'strict-transport-security': STRICT_TRANSPORT_SECURITY } : {}),
  });
}

/** Every answer of this scope (and its children) carries `headers`. */
export function registerSecurityHeaders(app: FastifyInstance, headers: HeaderSet): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
