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

export async function oauthAuthorizeRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };

  app.get('/oauth/authorize', page, async (request, reply) => {
    const query = new URL(request.url, 'http://localhost').searchParams;
    const step = await startAuthorization(app.deps, paramsFromEntries(query), await currentSignIn(request));
    return answer(request, reply, step);
  });

  app.post('/oauth/authorize', page, async (request, reply) => {
    verifyCsrf(request);
    const { _csrf: _ignored, decision, ...fields } = (request.body ?? {}) as Record<string, unknown>;
    const step = await decideAuthorization(app.deps, paramsFromObject(fields), await currentSignIn(request),
      typeof decision === 'string' ? decision : undefined);
    return answer(request, reply, step);
  });
}
