/** GET/POST /signup: a new account, then signed in (INTERFACE section 1). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { signUp } from '../../core/sign-up.js';
import { sendPage } from '../pages.js';
import { pageContext, startSession, verifyCsrf } from '../plugins/session.js';
import { signUpPage } from '../views/sign-up.js';

const MESSAGES = {
  taken: { field: 'username', message: 'That username is taken. Choose another one.' },
  throttled: { field: 'form', message: 'Too many accounts were created from your address. Wait an hour and try again.' },
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
      await startSession(request, reply, outcome.user);
      return reply.redirect(`/u/${encodeURIComponent(outcome.user.username)}`, 303);
    }
    if (outcome.reason === 'throttled') app.deps.metrics.rateLimitRefusals.inc({ scope: 'signup' });
    const error = outcome.reason === 'invalid' ? { field: outcome.field, message: outcome.message } : MESSAGES[outcome.reason];
    const status = outcome.reason === 'throttled' ? 429 : outcome.reason === 'taken' ? 409 : 400;
    // The username is echoed back only when short enough to be a username at all.
    return sendPage(reply, signUpPage(await pageContext(request, reply), { username: username.slice(0, 64), error }), status);
  });
}
