/** GET and POST /oauth/authorize (seed 4.1, INTERFACE sections 1, 3 and 10). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AuthorizeStep, MAX_RETURN_TO_LENGTH, decideAuthorization, startAuthorization } from '../../core/oauth/authorize/flow.js';
import { appendQuery } from '../../core/oauth/authorize/request.js';
import { OAuthError } from '../../core/errors.js';
import { paramsFromEntries, paramsFromObject } from '../../core/oauth/params.js';
import { visitor } from '../client-address.js';
import { localeOfUiLocales } from '../../core/locales.js';
import { csrfToken, currentSignIn, pageContext, requestLocale, uiLocalesOfReturnTo, verifyCsrf } from '../plugins/session.js';
import { consentPage } from '../views/consent.js';
import { formPostPage } from '../views/form-post.js';

async function answer(request: FastifyRequest, reply: FastifyReply, step: AuthorizeStep): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  switch (step.kind) {
    case 'respond': {
      const { response } = step;
      if (response.mode === 'query') return reply.redirect(appendQuery(response.redirectUri, response.parameters), 302);
      // The page's POST carries our origin, not `null` as under the site's `same-origin` policy, so
      // an app that checks Origin can allow the issuer; `origin` sends no path or query.
      return reply.type('text/html; charset=utf-8').header('referrer-policy', 'origin')
        .send(formPostPage(await pageContext(request, reply), response).value);
    }
    case 'sign_in': {
      // A request too long to come back to (an id_token_hint adds 1 to 1.5 kB) was dropped by
      // sign-in, and the member landed on the home page unawares (attack114): the page says so.
      const tooLong = step.returnTo.length > MAX_RETURN_TO_LENGTH;
      const query = new URLSearchParams(tooLong ? { too_long: '1' } : { return_to: step.returnTo });
      // The request's language goes with the notice, as the dropped return_to would have carried
      // it: its first supported ui_locales (OpenID Connect Core 3.1.2.1), that one tag.
      const locale = tooLong ? localeOfUiLocales(uiLocalesOfReturnTo(step.returnTo)) : undefined;
      if (locale) query.set('ui_locales', locale);
      if (step.loginHint) query.set('login_hint', step.loginHint);
      if (step.reauthenticate && !tooLong) query.set('reauth', '1');
      return reply.redirect(`/login?${query.toString()}`, 302);
    }
    case 'consent': {
      csrfToken(request, reply);
      // The request's ui_locales (OpenID Connect Core 3.1.2.1), from its fields: a pushed one's are not in the URL.
      const uiLocales = step.fields.find(([name]) => name === 'ui_locales')?.[1];
      const context = await pageContext(request, reply, { uiLocales });
      return reply.type('text/html; charset=utf-8').send(consentPage(context, {
        request: step.request, owner: step.owner, user: step.user, fields: step.fields, granted: step.granted,
      }).value);
    }
  }
}

/**
 * The longest query a POSTed authorization request is sent on with. The GET that follows must fit
 * Node's 16 kB of request line and headers, cookies included, or the browser meets a 431; and a
 * 64 kB form re-encoded (a byte that is not UTF-8 becomes nine characters) made a half-megabyte
 * Location that proxies refuse.
 */
export const MAX_POSTED_QUERY_LENGTH = 8192;

/**
 * Whether `body` is what a form parses to: each field a string, or strings where it repeats. A JSON
 * body of objects had its fields turned into text for the GET, and `{"toString":1}` or arrays nested
 * thousands deep threw there: a 500 and a logged stack for anyone's request (attack77).
 */
function hasFormFields(body: object): body is Record<string, string | string[]> {
  return !Array.isArray(body) && Object.values(body).every((value) => typeof value === 'string'
    || (Array.isArray(value) && value.every((one) => typeof one === 'string')));
}

/** A parsed form body back in a query string, repeated parameters repeated (RFC 6749 3.1 refuses them). */
function formQuery(body: Record<string, string | string[]>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, one);
  }
  const encoded = query.toString();
  if (encoded.length > MAX_POSTED_QUERY_LENGTH) {
    throw new OAuthError('invalid_request', `This authorization request is too long to go on as a GET (at most ${MAX_POSTED_QUERY_LENGTH} characters once encoded): send fewer or shorter parameters, or push it first (POST /api/oauth/par) and send its request_uri.`);
  }
  return encoded;
}

export async function oauthAuthorizeRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/oauth/authorize', page, async (request, reply) => {
    const query = new URL(request.url, 'http://localhost').searchParams;
    const step = await startAuthorization(app.deps, paramsFromEntries(query), await currentSignIn(request), visitor(request));
    return answer(request, reply, step);
  });

  app.post('/oauth/authorize', page, async (request, reply) => {
    const posted = request.body;
    const form = typeof posted === 'object' && posted !== null;
    const body = form ? posted : {};
    if (!hasFormFields(body)) {
      throw new OAuthError('invalid_request', 'An authorization request sent by POST is a form (application/x-www-form-urlencoded, OpenID Connect Core 3.1.2.1): each parameter a string.');
    }
    // OpenID Connect Core 3.1.2.1: an authorization request may come by POST. One is told from the
    // consent form's submission by carrying neither of its fields. The session cookie (SameSite=Lax)
    // does not come with another site's POST, so the request goes on as the same GET, which brings it.
    if (form && !('decision' in body) && !('_csrf' in body)) {
      return reply.header('cache-control', 'no-store').redirect(`/oauth/authorize?${formQuery(body)}`, 303);
    }
    verifyCsrf(request);
    const { _csrf: _ignored, decision, ...fields } = body;
    const step = await decideAuthorization(app.deps, paramsFromObject(fields), await currentSignIn(request), visitor(request),
      typeof decision === 'string' ? decision : undefined, requestLocale(request));
    return answer(request, reply, step);
  });
}
