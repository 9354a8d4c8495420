/** GET/POST /login and POST /logout (INTERFACE sections 1 and 10). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { signIn } from '../../core/sign-in.js';
import { percentEncodeNonAscii } from '../../core/urls.js';
import { retryMessage } from '../pages.js';
import { currentSignIn, deviceCookie, endSession, pageContext, setDeviceCookie, startSession, verifyCsrf } from '../plugins/session.js';
import { signInPage } from '../views/sign-in.js';

/**
 * Only a path on this site may be returned to, never another origin (no open redirect); other
 * characters than ASCII are percent-encoded, so the path fits a `Location` header.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > 8000) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || /[\x00-\x1f]/.test(value)) return '/';
  return percentEncodeNonAscii(value);
}

const WRONG_CREDENTIALS = 'That username and password do not match an account that can sign in.';

interface SignInBody {
  username?: string;
  password?: string;
  return_to?: string;
  _csrf?: string;
}

const signInBody = {
  type: 'object',
  properties: {
    username: { type: 'string', maxLength: 256 },
    password: { type: 'string', maxLength: 1024 },
    return_to: { type: 'string', maxLength: 8000 },
    _csrf: { type: 'string', maxLength: 200 },
  },
} as const;

export async function signInRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/login', page, async (request: FastifyRequest<{ Querystring: { return_to?: string; login_hint?: string; reauth?: string } }>, reply) => {
    const context = await pageContext(request, reply);
    const returnTo = safeReturnTo(request.query.return_to);
    const hint = typeof request.query.login_hint === 'string' ? request.query.login_hint.slice(0, 64) : '';
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
      .send(signInPage(context, { username: hint, returnTo, reauthenticate: request.query.reauth === '1' }).value);
  });

  app.post('/login', { ...page, schema: { body: signInBody } }, async (request: FastifyRequest<{ Body: SignInBody }>, reply) => {
    verifyCsrf(request);
    const { deps } = app;
    const username = request.body.username ?? '';
    const returnTo = safeReturnTo(request.body.return_to);
    const outcome = await signIn(deps, { username, password: request.body.password ?? '', address: request.ip, deviceCookie: deviceCookie(request) });
    if (!outcome.ok) {
      // One label for every wrong sign-in: the metrics must not tell a right password of a suspended account apart.
      deps.metrics.signInFailures.inc({ reason: outcome.reason === 'throttled' ? 'throttled' : 'invalid_credentials' });
      const context = await pageContext(request, reply);
      if (outcome.reason === 'throttled') reply.code(429).header('retry-after', String(outcome.retryAfterSeconds));
      else reply.code(401);
      const error = outcome.reason === 'throttled'
        ? retryMessage('Too many failed sign-ins for this account or from your network.', outcome.retryAfterSeconds)
        : WRONG_CREDENTIALS;
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
        .send(signInPage(context, { username, returnTo, error }).value);
    }
    setDeviceCookie(request, reply, outcome.deviceCookie);
    await startSession(request, reply, outcome.user);
    return reply.redirect(returnTo, 303);
  });

  app.post('/logout', page, async (request, reply) => {
    verifyCsrf(request);
    const signedIn = await currentSignIn(request);
    await endSession(request, reply);
    if (signedIn) app.deps.audit.record({ audit: 'sign_out', userId: signedIn.user.id, address: request.ip });
    return reply.redirect('/', 303);
  });
}
