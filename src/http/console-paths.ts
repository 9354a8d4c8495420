/**
 * The staff console's addresses (INTERFACE section 14), which the console's routes and the not-found
 * answer both know, and the staff member its gate let in, which its routes and its error pages read.
 */
import type { FastifyRequest } from 'fastify';
import type { StaffMember } from '../core/staff/staff.js';

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
 * The address the router is given (Fastify's `rewriteUrl`): one under /admin that does not decode
 * (a malformed percent-escape) with its path's every `%` escaped, so that it names nothing and is
 * answered behind the console's gate, as any other address there (refused by the router before
 * any hook, it was the site's 404 page, to staff too); any other as sent.
 */
export function routableUrl(url: string): string {
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
