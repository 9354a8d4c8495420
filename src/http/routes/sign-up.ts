/**
 * GET/POST /signup: a new account, then signed in (INTERFACE section 1). Like /login it carries
 * `return_to`, so a person an app sent to sign in who creates an account instead goes on to that
 * app's consent page (INTERFACE section 11); the page names the app.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { signUp } from '../../core/accounts/sign-up.js';
import { accountKey } from '../../core/accounts/device-cookies.js';
import { throttledHeaders } from '../../core/rate-limit-fields.js';
import { firstCharacters } from '../../core/text.js';
import { retryMessage, sendPage } from '../pages.js';
import { deviceCookie, pageContext, setDeviceCookie, startSession, verifyCsrf } from '../plugins/session.js';
import type { FormError } from '../views/forms.js';
import { signUpPage } from '../views/sign-up.js';
import { MAX_RETURN_TO_LENGTH } from '../../core/oauth/authorize/flow.js';
import { appNameFor, lostRequestBody, lostRequestOf, safeReturnTo } from './sign-in.js';
import { clientAddress } from '../client-address.js';

const MESSAGES = {
  taken: { field: 'username', message: 'That username is taken. Choose another one.', words: { key: 'problems.usernameTaken' } },
} as const;

interface SignUpBody {
  username?: string;
  nickname?: string;
  password?: string;
  return_to?: string;
  too_long?: string;
  ui_locales?: string;
  _csrf?: string;
}

export async function signUpRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/signup', page, async (request: FastifyRequest<{ Querystring: { return_to?: string; too_long?: string; ui_locales?: string } }>, reply) => {
    const returnTo = safeReturnTo(request.query.return_to);
    return sendPage(reply, signUpPage(await pageContext(request, reply), {
      username: '', nickname: '', returnTo, appName: await appNameFor(app, request, returnTo), ...lostRequestOf(request.query),
    }));
  });

  app.post('/signup', {
    ...page,
    schema: {
      body: {
        type: 'object',
        properties: { username: { type: 'string' }, nickname: { type: 'string' }, password: { type: 'string' }, return_to: { type: 'string', maxLength: MAX_RETURN_TO_LENGTH }, ...lostRequestBody, _csrf: { type: 'string' } },
      },
    },
  }, async (request: FastifyRequest<{ Body: SignUpBody }>, reply) => {
    verifyCsrf(request);
    const username = (request.body.username ?? '').trim();
    const nickname = request.body.nickname ?? '';
    // The same rule as sign-in's: only a path on this site, never another origin.
    const returnTo = safeReturnTo(request.body.return_to);
    const outcome = await signUp(app.deps, { username, nickname, password: request.body.password ?? '', address: clientAddress(request) });
    if (outcome.ok) {
      const { user } = outcome;
      app.deps.audit.record({ audit: 'account.created', userId: user.id, username: user.username, via: 'site', address: clientAddress(request) }, request.id);
      // The new account's browser proved it: it keeps its own sign-in attempts from now on.
      setDeviceCookie(request, reply, await app.deps.deviceCookies.afterSignIn(deviceCookie(request), accountKey(user.username)));
      // A session begins: logged as a sign-in, as every one is.
      await startSession(request, reply, outcome.user, { amr: ['pwd'], method: 'password' });
      // Back where the person was going (an app's authorization request); else to the new profile.
      return reply.redirect(returnTo === '/' ? `/u/${encodeURIComponent(outcome.user.username)}` : returnTo, 303);
    }
    if (outcome.reason === 'throttled') {
      app.deps.metrics.rateLimitRefusals.inc({ scope: 'signup' });
      reply.headers(throttledHeaders('sign-up', outcome.retryAfterSeconds));
    }
    const context = await pageContext(request, reply);
    const errors: readonly FormError[] = outcome.reason === 'invalid' ? outcome.problems
      : outcome.reason === 'throttled' ? [{ field: 'form', message: retryMessage(context.t.text('sign-up.tooManyAccounts'), outcome.retryAfterSeconds, context.t) }]
      : [MESSAGES[outcome.reason]];
    const status = outcome.reason === 'throttled' ? 429 : outcome.reason === 'taken' ? 409 : 400;
    // The username and nickname are echoed back cut to what could be one at all, whole
    // characters only (a cut emoji would show as U+FFFD).
    return sendPage(reply, signUpPage(context, {
      username: firstCharacters(username, 64), nickname: firstCharacters(nickname, 64), returnTo, appName: await appNameFor(app, request, returnTo), errors,
      ...lostRequestOf(request.body),
    }), status);
  });
}
