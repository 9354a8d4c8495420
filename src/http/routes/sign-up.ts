/** GET/POST /signup: a new account, then signed in (INTERFACE section 1). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { signUp } from '../../core/sign-up.js';
import { accountKey } from '../../core/device-cookies.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { retryMessage, sendPage } from '../pages.js';
import { deviceCookie, pageContext, setDeviceCookie, startSession, verifyCsrf } from '../plugins/session.js';
import { signUpPage } from '../views/sign-up.js';

const MESSAGES = {
  taken: { field: 'username', message: 'That username is taken. Choose another one.' },
} as const;

export async function signUpRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/signup', page, async (request, reply) => sendPage(reply, signUpPage(await pageContext(request, reply), { username: '' })));

  app.post('/signup', {
    ...page,
    schema: { body: { type: 'object', properties: { username: { type: 'string' }, password: { type: 'string' }, _csrf: { type: 'string' } } } },
  }, async (request: FastifyRequest<{ Body: { username?: string; password?: string } }>, reply) => {
    verifyCsrf(request);
    const username = (request.body.username ?? '').trim();
    const outcome = await signUp(app.deps, { username, password: request.body.password ?? '', address: request.ip });
    if (outcome.ok) {
      const { user } = outcome;
      app.deps.audit.record({ audit: 'account.created', userId: user.id, username: user.username, via: 'site', address: request.ip });
      // The new account's browser proved it: it keeps its own sign-in attempts from now on.
      setDeviceCookie(request, reply, await app.deps.deviceCookies.afterSignIn(deviceCookie(request), accountKey(user.username)));
      await startSession(request, reply, outcome.user);
      return reply.redirect(`/u/${encodeURIComponent(outcome.user.username)}`, 303);
    }
    if (outcome.reason === 'throttled') {
      app.deps.metrics.rateLimitRefusals.inc({ scope: 'signup' });
      reply.headers(throttledHeaders('sign-up', outcome.retryAfterSeconds));
    }
    const error = outcome.reason === 'invalid' ? { field: outcome.field, message: outcome.message }
      : outcome.reason === 'throttled' ? { field: 'form', message: retryMessage('Too many accounts were created from your address.', outcome.retryAfterSeconds) }
      : MESSAGES[outcome.reason];
    const status = outcome.reason === 'throttled' ? 429 : outcome.reason === 'taken' ? 409 : 400;
    // The username is echoed back only when short enough to be a username at all.
    return sendPage(reply, signUpPage(await pageContext(request, reply), { username: username.slice(0, 64), error }), status);
  });
}
