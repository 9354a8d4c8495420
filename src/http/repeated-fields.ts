import type { FastifyRequest } from 'fastify';

/**
 * Whether `request` carried the header field `name` (lower case) more than once. A field that
 * takes one value, such as `Authorization`, may not be sent twice (RFC 9110 5.3), and Node keeps
 * only the first of those it knows to take one and drops the rest, so only the raw list tells.
 */
export function fieldRepeats(request: FastifyRequest, name: string): boolean {
  const raw = request.raw.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length !== name.length || field.toLowerCase() !== name) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}
