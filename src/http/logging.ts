/**
 * Logger options: structured JSON (pino) that never carries a credential. Headers are not
 * logged at all, and query parameters that can hold a secret are replaced by `[redacted]`.
 */
import type { FastifyServerOptions } from 'fastify';

const SECRET_PARAMETERS = new Set([
  'code', 'token', 'access_token', 'refresh_token', 'id_token', 'id_token_hint', 'client_secret',
  'password', 'code_verifier', 'state', 'nonce', '_csrf',
]);

/** The URL with the value of every secret-bearing query parameter redacted. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = decodeURIComponentSafe(eq === -1 ? pair : pair.slice(0, eq));
    return SECRET_PARAMETERS.has(name) ? `${pair.slice(0, eq === -1 ? pair.length : eq)}=[redacted]` : pair;
  });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function decodeURIComponentSafe(value: string): string {
  try { return decodeURIComponent(value); } catch { return value; }
}

export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers', 'res.headers', '*.password', '*.client_secret', '*.token'], remove: true },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}
