/**
 * GET and POST /oauth/logout: OpenID Connect RP-Initiated Logout 1.0 (the `end_session_endpoint`,
 * INTERFACE section 5). The rules are in `src/core/oidc/logout/end-session.ts`; this route reads the
 * request, ends the session when they say so, and answers with a page or a redirect.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  END_SESSION_PARAMETERS, END_SESSION_PATH, type EndSessionRequest, type SignedIn, appToName, confirmationFields, decideEndSession,
  postLogoutLocation, redirectRefusal, validateEndSession,
} from '../../core/oidc/logout/end-session.js';
import { OAuthError } from '../../core/errors.js';
import { type Params, paramsFromEntries, paramsFromObject } from '../../core/oauth/params.js';
import { sendPage } from '../pages.js';
import { currentSignIn, endSession, pageContext, verifyCsrf } from '../plugins/session.js';
import { logoutConfirmationPage, signedOutPage } from '../views/logout.js';

export async function logoutRoutes(app: FastifyInstance): Promise<void> {
  const page = { config: { html: true } };
  const { deps } = app;

  async function validate(params: Params): Promise<EndSessionRequest> {
    return validateEndSession({ params, stores: deps.stores, issuer: deps.settings.baseUrl, keys: await deps.keys.keySet(), now: deps.clock.now() });
  }

  /**
   * Back to the app's registered URI with `state` (section 3), or the "signed out" page.
   * `signedIn`: who was signed in before the request, whom the app's hint must name.
   */
  async function finish(request: FastifyRequest, reply: FastifyReply, ended: EndSessionRequest, signedIn: SignedIn | undefined): Promise<FastifyReply> {
    const location = postLogoutLocation(ended, signedIn);
    if (location !== undefined) return reply.header('cache-control', 'no-store').redirect(location, 303);
    return sendPage(reply, signedOutPage(await pageContext(request, reply), { client: appToName(ended, signedIn), refusedRedirect: redirectRefusal(ended, signedIn) }));
  }

  app.get(END_SESSION_PATH, page, async (request, reply) => {
    const ended = await validate(paramsFromEntries(new URL(request.url, 'http://localhost').searchParams));
    const signedIn = await currentSignIn(request);
    switch (decideEndSession(ended, signedIn)) {
      case 'end':
        await endSession(request, reply);
        return finish(request, reply, ended, signedIn);
      case 'nothing':
        return finish(request, reply, ended, signedIn);
      case 'confirm':
        return sendPage(reply, logoutConfirmationPage(await pageContext(request, reply), {
          client: appToName(ended, signedIn), user: signedIn!.user, fields: confirmationFields(ended),
        }));
    }
  });

  app.post(END_SESSION_PATH, page, async (request, reply) => {
    const body = request.body !== null && typeof request.body === 'object' ? request.body as Record<string, unknown> : {};
    if (!('decision' in body)) {
      // An app's own POST (section 2 allows it). It is cross-site, so the SameSite=Lax session
      // cookie did not come with it; the same request as a GET navigation brings it, and is
      // checked there like any other.
      const query = new URLSearchParams();
      for (const [name, value] of paramsFromObject(body)) {
        if ((END_SESSION_PARAMETERS as readonly string[]).includes(name)) for (const v of value) query.append(name, v);
      }
      const search = query.toString();
      return reply.header('cache-control', 'no-store').redirect(search === '' ? END_SESSION_PATH : `${END_SESSION_PATH}?${search}`, 303);
    }
    // The confirmation form: our CSRF token, and the request re-validated from its hidden fields.
    verifyCsrf(request);
    const { _csrf: _token, decision, ...fields } = body;
    const ended = await validate(paramsFromObject(fields));
    const signedIn = await currentSignIn(request);
    if (decision === 'logout') {
      await endSession(request, reply);
      return finish(request, reply, ended, signedIn);
    }
    if (decision === 'stay') return reply.header('cache-control', 'no-store').redirect(postLogoutLocation(ended, signedIn) ?? '/', 303);
    throw new OAuthError('invalid_request', 'Choose to sign out or to stay signed in.', { status: 400 });
  });
}
