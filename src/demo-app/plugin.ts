/**
 * The demo third-party application at /demo-app: an EXAMPLE, written the way a real app would
 * be. It shares nothing with the service but the process: it finds the service by OpenID
 * discovery and talks to it only over HTTP with `openid-client`, runs the authorization code
 * flow with PKCE (S256), `state` and `nonce`, keeps its own server-side session behind a cookie
 * of its own, and shows what it read: the profile, the posts and the id_token's claims.
 *
 * Signing out, both ways (OpenID RP-Initiated and Back-Channel Logout 1.0):
 * - "Sign out" ends the app's session and sends the browser to the service's
 *   `end_session_endpoint` with the id_token as `id_token_hint`, a registered
 *   `post_logout_redirect_uri` and a `state` it checks when the browser comes back;
 * - `POST /demo-app/backchannel-logout` takes the service's `logout_token`, verifies it with
 *   jose against the service's JWKS (issuer, audience, `typ`, the event, no `nonce`, a `jti`
 *   not seen before), and ends every session of the app that came from that sign-in (`sid`),
 *   or every session of that user (`sub`) when the token names no session.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { type Locale, type Translator, chooseLocale } from '../core/locales.js';
import { translator } from '../i18n/catalogs.js';
import { chosenName, rich } from '../http/views/words.js';
import { demoAppPage, demoErrorPage, demoSignedOutPage } from './views.js';

export interface DemoAppOptions {
  /** The service's issuer (its BASE_URL); discovery is at `{issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registered for the client; normally `{issuer}/demo-app/callback`. */
  redirectUri: string;
  /**
   * Registered as the client's post-logout redirect URI; normally `{issuer}/demo-app/signed-out`,
   * which is also the default (beside `redirectUri`).
   */
  postLogoutRedirectUri?: string;
}

/** Section 2.4 of Back-Channel Logout 1.0: the event a logout token carries. */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token's `jti` is remembered this long, so a replay of it is refused (section 2.6). */
const SEEN_JTI_MS = 10 * 60 * 1000;

const SCOPE = 'openid profile:read posts:read';
const COOKIE = 'demo_app_session';
const SESSION_LIFETIME_MS = 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

/** A value the service sent, as a page shows it: without control or invisible format characters, trimmed. */
const shown = (value: string): string => value.replace(/[\p{Cc}\p{Cf}]/gu, '').trim();

/** What the app remembers for one browser. */
export interface DemoSession {
  expiresAt: number;
  csrf: string;
  /** While a sign-in is under way: the secrets the callback must match. */
  pending?: { codeVerifier: string; state: string; nonce: string };
  /** After a sign-in: what the app read, and the id_token for signing out. */
  signedIn?: { claims: Record<string, unknown>; profile: unknown; posts: unknown; scope: string; idToken: string };
  /** While a sign-out at the service is under way: the state its return must carry. */
  pendingLogout?: { state: string };
  /** Why the last session ended, shown once. */
  notice?: 'back-channel logout';
}

/**
 * `words`: the service's words in a language, naming the service as its pages do (SITE_NAME);
 * the catalogs' own without it.
 */
export async function demoApp(app: FastifyInstance, options: { demo?: DemoAppOptions | undefined; words?: (locale: Locale) => Translator }): Promise<void> {
  const settings = options.demo;
  const words = options.words ?? ((locale: Locale) => translator(locale));
  const sessions = new Map<string, DemoSession>();
  /** `jti` of logout tokens already taken, until they could no longer be valid. */
  const seenJtis = new Map<string, number>();
  let configuration: Promise<oidc.Configuration> | undefined;
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const postLogoutRedirectUri = settings && (settings.postLogoutRedirectUri ?? new URL('signed-out', settings.redirectUri).href);

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

  /** A page in `t`'s language, which it names in `Content-Language` as the service's pages do. */
  function send(reply: FastifyReply, t: Translator, body: string, status = 200): FastifyReply {
    return reply.code(status).type('text/html; charset=utf-8').header('content-language', t.locale).header('cache-control', 'no-store')
      .header('vary', 'Accept-Language').send(body);
  }

  /** The reader's language, as the browser asks for it: the app is another site's, and knows nothing of the service's picker. */
  const wordsFor = (request: FastifyRequest): Translator => words(chooseLocale({ acceptLanguage: request.headers['accept-language'] }));

  app.get('/demo-app', async (request, reply) => {
    const s = settings ? session(request, reply) : undefined;
    const t = wordsFor(request);
    const page = demoAppPage(t, { configured: settings !== undefined, session: s, scope: SCOPE });
    // Shown once (attack81: it stayed until the next sign-in).
    if (s) delete s.notice;
    return send(reply, t, page);
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
      const t = wordsFor(request);
      return send(reply, t, demoErrorPage(t, t.text('demo-app.discoveryFailed')), 502);
    }
    s.pending = pending;
    return reply.redirect(url.href, 303);
  });

  app.get('/demo-app/callback', async (request, reply) => {
    if (!settings) return reply.redirect('/demo-app', 303);
    const s = session(request, reply);
    const pending = s.pending;
    const query = request.query as Record<string, unknown>;
    const t = wordsFor(request);
    // RFC 6749 10.12: an answer is to this browser's sign-in only if it carries that sign-in's state.
    // Another, which anyone can link to, shows nothing it carries (its description would read as the
    // service's words) and leaves the sign-in under way as it was.
    if (!pending || query.state !== pending.state) return send(reply, t, demoErrorPage(t, t.text('demo-app.notStartedHere')), 400);
    delete s.pending;
    if (typeof query.error === 'string') {
      // RFC 6749 4.1.2.1: `error` is a code, so an empty one says nothing; and the description only explains a code.
      const error = shown(query.error);
      const description = typeof query.error_description === 'string' ? shown(query.error_description) : '';
      // A code of RFC 6749 4.1.2.1 or OpenID Connect Core 3.1.2.6 in the reader's words, the code kept
      // beside them for the app's developer; another code is shown as it came.
      const reason = t.text('demo-app.errorReason', { error });
      // The service's own words, right-to-left ones isolated (`chosenName`: `<bdi>`, UAX #9), else
      // they would carry the digits and brackets after them into their own direction.
      const values = { reason, error: chosenName(error), description: chosenName(description) };
      const message = error === '' ? t.text('demo-app.signInIncompleteNoReason')
        : reason !== '' ? rich(t, description ? 'demo-app.signInRefusedDescribed' : 'demo-app.signInRefused', values)
        : rich(t, description ? 'demo-app.signInIncompleteDescribed' : 'demo-app.signInIncomplete', values);
      return send(reply, t, demoErrorPage(t, message), 400);
    }
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
      s.signedIn = { claims: { ...tokens.claims() }, profile, posts, scope: tokens.scope ?? '', idToken: tokens.id_token! };
      delete s.notice;
      return reply.redirect('/demo-app', 303);
    } catch (error) {
      request.log.warn({ err: error }, 'demo app: sign-in failed');
      const message = error instanceof Error ? error.message : 'unknown error';
      return send(reply, t, demoErrorPage(t, t.text('demo-app.signInFailed', { reason: message })), 400);
    }
  });

  /**
   * Signs out of the app, then of the service: RP-Initiated Logout 1.0 with the id_token as the
   * hint (so the service need not ask) and a state checked on the way back.
   */
  app.post('/demo-app/logout', async (request, reply) => {
    const id = request.cookies[COOKIE];
    const s = id ? sessions.get(id) : undefined;
    const sent = (request.body as { csrf?: unknown } | undefined)?.csrf;
    if (!settings || !id || !s || typeof sent !== 'string' || sent !== s.csrf) return reply.redirect('/demo-app', 303);
    const idToken = s.signedIn?.idToken;
    delete s.signedIn;
    if (idToken === undefined) return reply.redirect('/demo-app', 303);
    const state = oidc.randomState();
    s.pendingLogout = { state };
    try {
      const url = oidc.buildEndSessionUrl(await config(settings), { id_token_hint: idToken, post_logout_redirect_uri: postLogoutRedirectUri!, state });
      return reply.redirect(url.href, 303);
    } catch (error) {
      request.log.warn({ err: error }, 'demo app: discovery failed');
      const t = wordsFor(request);
      return send(reply, t, demoErrorPage(t, t.text('demo-app.signOutDiscoveryFailed')), 502);
    }
  });

  /** Where the service sends the browser back after signing it out (the registered post-logout redirect URI). */
  app.get('/demo-app/signed-out', async (request, reply) => {
    if (!settings) return reply.redirect('/demo-app', 303);
    const s = session(request, reply);
    const t = wordsFor(request);
    const expected = s.pendingLogout?.state;
    const state = (request.query as { state?: unknown }).state;
    if (expected !== undefined && state === expected) {
      delete s.pendingLogout;
      return send(reply, t, demoSignedOutPage(t, 'signed out'));
    }
    // Not this app's return (a link from anywhere, or this page reloaded): the sign-out under way,
    // if any, still waits for its own (attack82), and only a member still signed in is warned.
    return s.signedIn === undefined ? send(reply, t, demoSignedOutPage(t, 'not signed in')) : send(reply, t, demoSignedOutPage(t, 'still signed in'), 400);
  });

  /**
   * Back-Channel Logout 1.0 section 2.5: the service POSTs a logout token here. Answered 200 when
   * it was taken (section 2.8), 400 when it does not verify; never cached.
   */
  app.post('/demo-app/backchannel-logout', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (!settings) return reply.code(404).send({ error: 'not_found' });
    const token = (request.body as { logout_token?: unknown } | undefined)?.logout_token;
    if (typeof token !== 'string') return reply.code(400).send({ error: 'invalid_request', error_description: 'logout_token is missing' });
    let claims: Record<string, unknown>;
    try {
      const metadata = (await config(settings)).serverMetadata();
      jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri!));
      ({ payload: claims } = await jwtVerify(token, jwks, {
        issuer: metadata.issuer, audience: settings.clientId, typ: 'logout+jwt', algorithms: ['RS256', 'ES256'], requiredClaims: ['iat', 'jti', 'events'],
      }));
    } catch (error) {
      request.log.info({ err: error }, 'demo app: a logout token did not verify');
      return reply.code(400).send({ error: 'invalid_request', error_description: 'the logout token does not verify' });
    }
    const events = claims.events as Record<string, unknown> | undefined;
    const { sub, sid, jti } = claims;
    const now = Date.now();
    for (const [seen, until] of seenJtis) if (until <= now) seenJtis.delete(seen);
    if (typeof events !== 'object' || events === null || !(BACKCHANNEL_LOGOUT_EVENT in events) || 'nonce' in claims
      || (typeof sub !== 'string' && typeof sid !== 'string') || typeof jti !== 'string' || seenJtis.has(jti)) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'not a logout token this app takes' });
    }
    seenJtis.set(jti, now + SEEN_JTI_MS);
    // With sid: the sessions of that sign-in at the service. Without: every session of the user.
    for (const s of sessions.values()) {
      const signedIn = s.signedIn?.claims;
      if (!signedIn) continue;
      const matches = typeof sid === 'string' ? signedIn.sid === sid : signedIn.sub === sub;
      if (matches) {
        delete s.signedIn;
        s.notice = 'back-channel logout';
      }
    }
    return reply.code(200).send();
  });
}
