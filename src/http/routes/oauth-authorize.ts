/** GET and POST /oauth/authorize (seed 4.1, INTERFACE sections 1, 3 and 10). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AuthorizeStep, decideAuthorization, startAuthorization } from '../../core/authorize/flow.js';
import { paramsFromEntries, paramsFromObject } from '../../core/params.js';
import { csrfToken, currentSignIn, pageContext, verifyCsrf } from '../plugins/session.js';
import { consentPage } from '../views/consent.js';

async function answer(request: FastifyRequest, reply: FastifyReply, step: AuthorizeStep): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  switch (step.kind) {
    case 'redirect':
      return reply.redirect(step.location, 302);
    case 'sign_in': {
      const query = new URLSearchParams({ return_to: step.returnTo });
      if (step.loginHint) query.set('login_hint', step.loginHint);
      if (step.reauthenticate) query.set('reauth', '1');
      return reply.redirect(`/login?${query.toString()}`, 302);
    }
    case 'consent': {
      csrfToken(request, reply);
      const context = await pageContext(request, reply);
      return reply.type('text/html; charset=utf-8').send(consentPage(context, {
        request: step.request, owner: step.owner, username: step.user.username, fields: step.fields,
      }).value);
    }
  }
}

/** A parsed form body back in a query string, repeated parameters repeated (RFC 6749 3.1 refuses them). */
function formQuery(body: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, String(one));
  }
  return query.toString();
}

export async function oauthAuthorizeRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/oauth/authorize', page, async (request, reply) => {
    const query = new URL(request.url, 'http://localhost').searchParams;
    const step = await startAuthorization(app.deps, paramsFromEntries(query), await currentSignIn(request));
    return answer(request, reply, step);
  });

  app.post('/oauth/authorize', page, async (request, reply) => {
    const form = typeof request.body === 'object' && request.body !== null;
    const body = (form ? request.body : {}) as Record<string, unknown>;
    // OpenID Connect Core 3.1.2.1: an authorization request may come by POST. One is told from the
    // consent form's submission by carrying neither of its fields. The session cookie (SameSite=Lax)
    // does not come with another site's POST, so the request goes on as the same GET, which brings it.
    if (form && !('decision' in body) && !('_csrf' in body)) {
      return reply.header('cache-control', 'no-store').redirect(`/oauth/authorize?${formQuery(body)}`, 303);
    }
    verifyCsrf(request);
    const { _csrf: _ignored, decision, ...fields } = body;
    const step = await decideAuthorization(app.deps, paramsFromObject(fields), await currentSignIn(request),
      typeof decision === 'string' ? decision : undefined);
    return answer(request, reply, step);
  });
}
