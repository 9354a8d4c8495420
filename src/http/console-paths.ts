/**
 * The staff console's addresses (INTERFACE section 14), which the console's routes and the not-found
 * answer both know, and the staff member its gate let in, which its routes and its error pages read.
 */
import type { StaffMember } from '../core/staff/staff.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The staff member the console's gate let in: set only past the gate, so only staff read what depends on it. */
    staff?: StaffMember;
  }
}

/** Whether a path is the console's: `/admin` and everything under it. */
export function isConsolePath(url: string): boolean {
  return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?');
}

/** Headers of every console answer, the not-found answer included. */
export const CONSOLE_HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex' } as const;
