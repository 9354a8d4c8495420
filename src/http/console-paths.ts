/**
 * The staff console's addresses (INTERFACE section 14), which the console's routes and the not-found
 * answer both know, and the staff member its gate let in, which its routes and its error pages read.
 */
import type { FastifyRequest } from 'fastify';
import type { StaffMember } from '../core/staff/staff.js';
import { ABSOLUTE_FORM_AUTHORITY } from '../observability/request-target.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The staff member the console's gate let in: set only past the gate, so only staff read what depends on it. */
    staff?: StaffMember;
  }
  interface FastifyContextConfig {
    /** A console form's route: the route of the page the form is on (`formPageOf`). */
    formPage?: `/admin/${string}`;
  }
}

/** Whether a path is the console's: `/admin` and everything under it. */
export function isConsolePath(url: string): boolean {
  return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?');
}

/**
 * The path and query of a request target as sent, in origin form or in absolute form (RFC 9112
 * 3.2.2) whether or not the latter is a URL ('/' when it has none), for what is decided by the path
 * before or without the router: the router refuses `http://%zz/api/open/v1/me` (`routableUrl`
 * leaves it as sent), whose refusal is still the API's. Anything else (asterisk form) as sent.
 */
export function pathOfTarget(url: string): string {
  if (url.startsWith('/')) return url;
  const authority = ABSOLUTE_FORM_AUTHORITY.exec(url);
  if (authority === null) return url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The path and query of a request target in absolute form (RFC 9112 3.2.2, `http://host/admin`,
 * which Node accepts), as the router reads them ('/' when it has no path); `undefined` for a target
 * in any other form, or one the router refuses (a fragment, no host, not a URL).
 */
function originFormOf(url: string): string | undefined {
  if (!/^https?:\/\/[^/?#]/i.test(url) || url.includes('#') || !URL.canParse(url)) return undefined;
  return pathOfTarget(url);
}

/**
 * Whether `sent` is an OPTIONS request's target in absolute form with an empty path and no query
 * (`OPTIONS http://host HTTP/1.1`), which asks about the server as a whole: the last proxy would
 * forward it as `OPTIONS *` (RFC 9112 3.2.4), and a client talking to the service as to a proxy
 * sends it so. It was the 405 of the home page.
 */
function asksAboutServer(sent: string, method: string | undefined): boolean {
  return method === 'OPTIONS' && originFormOf(sent) !== undefined && ABSOLUTE_FORM_AUTHORITY.exec(sent)?.[0] === sent;
}

/**
 * The address the router is given (Fastify's `rewriteUrl`): one that came in absolute form by its
 * path and query alone, as the router reads it (the console's gate, catch-all and error pages, and
 * the not-found answer's 405 and its JSON under /api/, know their requests by `request.url`: staff
 * read the site's 400 page for `http://host/admin/%zz`, and `POST http://host/api/open/v1/me` was
 * the site's HTML 404 page, attack100); under /admin with its path's every `%` escaped when that
 * does not decode (a malformed percent-escape), so that it names nothing and is answered behind
 * the console's gate, as any other address there (refused by the router before any hook, it was
 * the site's 404 page, to staff too); an OPTIONS that asks about the server in absolute form
 * (`asksAboutServer`) as `*`; any other as sent.
 */
export function routableUrl(sent: string, method?: string): string {
  if (asksAboutServer(sent, method)) return '*';
  const url = sent.startsWith('/') ? sent : originFormOf(sent) ?? sent;
  if (!isConsolePath(url)) return url;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  try {
    decodeURI(path);
    return url;
  } catch {
    return path.replaceAll('%', '%25') + url.slice(path.length);
  }
}

/** Headers of every console answer, the not-found answer included. */
export const CONSOLE_HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex' } as const;

/**
 * The page a console form's request came from, for its error page to lead back to: its route's
 * `formPage` with the request's parameters, each encoded as one path segment, so it is a page under
 * /admin whatever the address held (never the Referer, which another site can choose). `undefined`
 * for a request of no form.
 */
export function formPageOf(request: FastifyRequest): string | undefined {
  const params = request.params as Record<string, unknown>;
  return request.routeOptions.config?.formPage?.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(String(params[name])));
}
