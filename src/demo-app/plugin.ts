/**
 * The demo third-party application at /demo-app: an EXAMPLE, written the way a real app would
 * be. It shares nothing with the service but the process: it finds the service by OpenID
 * discovery and talks to it only over HTTP with `openid-client`, runs the authorization code
 * flow with PKCE (S256), `state` and `nonce`, keeps its own server-side session behind a cookie
 * of its own, and shows what it read: the profile, the posts and the id_token's claims.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import { demoAppPage, demoErrorPage } from './views.js';

export interface DemoAppOptions {
  /** The service's issuer (its BASE_URL); discovery is at `{issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registered for the client; normally `{issuer}/demo-app/callback`. */
  redirectUri: string;
}

const SCOPE = 'openid profile:read posts:read';
const COOKIE = 'demo_app_session';
const SESSION_LIFETIME_MS = 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

/** What the app remembers for one browser. */
export interface DemoSession {
  expiresAt: number;
  csrf: string;
  /** While a sign-in is under way: the secrets the callback must match. */
  pending?: { codeVerifier: string; state: string; nonce: string };
  /** After a sign-in: what the app read. */
  signedIn?: { claims: Record<string, unknown>; profile: unknown; posts: unknown; scope: string };
}

export async function demoApp(app: FastifyInstance, options: { demo?: DemoAppOptions | undefined }): Promise<void> {
  const settings = options.demo;
  const sessions = new Map<string, DemoSession>();
  let configuration: Promise<oidc.Configuration> | undefined;

  /** Discovery on first use: the service is not listening yet when the plugin is registered. */
  function config(demo: DemoAppOptions): Promise<oidc.Configuration> {
    configuration ??= oidc.discovery(new URL(demo.issuer), demo.clientId, demo.clientSecret, undefined, {
      // The demo runs on http://localhost; a real deployment uses https and drops this.
      execute: new URL(demo.issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
    }).catch((error: unknown) => {
      configuration = undefined;
      throw error;
    });
    return configuration;
  }

  function session(request: FastifyRequest, reply: FastifyReply): DemoSession {
    const now = Date.now();
    const id = request.cookies[COOKIE];
    const found = id ? sessions.get(id) : undefined;
    if (found && found.expiresAt > now) return found;
    if (id) sessions.delete(id);
    if (sessions.size >= MAX_SESSIONS) {
      for (const [key, value] of sessions) if (value.expiresAt <= now || sessions.size >= MAX_SESSIONS) sessions.delete(key);
    }
    const newId = randomBytes(32).toString('base64url');
    const created: DemoSession = { expiresAt: now + SESSION_LIFETIME_MS, csrf: randomBytes(32).toString('base64url') };
    sessions.set(newId, created);
    reply.setCookie(COOKIE, newId, {
      path: '/demo-app', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' || (settings?.issuer.startsWith('https:') ?? false),
      maxAge: SESSION_LIFETIME_MS / 1000,
    });
    return created;
  }

  function send(reply: FastifyReply, body: string, status = 200): FastifyReply {
    return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
  }

  app.get('/demo-app', async (request, reply) => {
    const s = settings ? session(request, reply) : undefined;
    return send(reply, demoAppPage({ configured: settings !== undefined, session: s, scope: SCOPE }));
  });

  app.get('/demo-app/login', async (request, reply) => {
    if (!settings) return reply.redirect('/demo-app', 303);
    const s = session(request, reply);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const pending = { codeVerifier, state: oidc.randomState(), nonce: oidc.randomNonce() };
    let url: URL;
    try {
      url = oidc.buildAuthorizationUrl(await config(settings), {
        redirect_uri: settings.redirectUri,
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      });
    } catch (error) {
      request.log.warn({ err: error }, 'demo app: discovery failed');
      return send(reply, demoErrorPage('The demo app could not read the service’s OpenID configuration.'), 502);
    }
    s.pending = pending;
    return reply.redirect(url.href, 303);
  });

  app.get('/demo-app/callback', async (request, reply) => {
    if (!settings) return reply.redirect('/demo-app', 303);
    const s = session(request, reply);
    const pending = s.pending;
    delete s.pending;
    const query = request.query as Record<string, unknown>;
    if (typeof query.error === 'string') {
      const description = typeof query.error_description === 'string' ? query.error_description : '';
      return send(reply, demoErrorPage(`Sign-in did not complete: ${query.error}${description ? ` (${description})` : ''}.`), 400);
    }
    if (!pending) return send(reply, demoErrorPage('This sign-in was not started here, or it was already finished. Start again.'), 400);
    try {
      const demoConfig = await config(settings);
      const currentUrl = new URL(request.url, settings.redirectUri);
      const tokens = await oidc.authorizationCodeGrant(demoConfig, currentUrl, {
        pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true,
      });
      const api = `${settings.issuer}/api/open/v1`;
      const read = async (path: string) => {
        const response = await oidc.fetchProtectedResource(demoConfig, tokens.access_token, new URL(`${api}${path}`), 'GET');
        return response.ok ? response.json() : { status: response.status, body: await response.text() };
      };
      const [profile, posts] = await Promise.all([read('/me'), read('/me/posts?size=10')]);
      s.signedIn = { claims: { ...tokens.claims() }, profile, posts, scope: tokens.scope ?? '' };
      return reply.redirect('/demo-app', 303);
    } catch (error) {
      request.log.warn({ err: error }, 'demo app: sign-in failed');
      const message = error instanceof Error ? error.message : 'unknown error';
      return send(reply, demoErrorPage(`Sign-in failed: ${message}`), 400);
    }
  });

  app.post('/demo-app/logout', async (request, reply) => {
    const id = request.cookies[COOKIE];
    const s = id ? sessions.get(id) : undefined;
    const sent = (request.body as { csrf?: unknown } | undefined)?.csrf;
    if (id && s && typeof sent === 'string' && sent === s.csrf) sessions.delete(id);
    reply.clearCookie(COOKIE, { path: '/demo-app' });
    return reply.redirect('/demo-app', 303);
  });
}
