/**
 * The named tricks of issue 7 (RFC 9700 and RFC 6819 attacks), each over real HTTP: header
 * injection in `state` and `redirect_uri`, open-redirect variants of a registered redirect URI and
 * of `return_to`, PKCE downgrade, a code or token of another client, and `alg: none` JWTs where a
 * code or token belongs. Each gets the right error, never a 5xx, and nothing stored changes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  type AuthorizeOptions, Browser, type TestClient, authorizeQuery, clientFields, codeExchangeFields, hiddenFields, introspect, newClient, obtainCode,
  obtainTokens, pkcePair, redirectParams, signedInBrowser, startOAuthApp, tokenRequest,
} from '../oauth/helpers.js';
import { appReview, person } from '../staff/support.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { snapshotTables } from '../support/snapshot.js';
import { unsignedJwt } from '../support/jwt.js';

const VOLATILE = ['last_used_at', 'last_seen_at'];
const REGISTERED = 'https://good.example/cb';

/** Variants of REGISTERED that a lax matcher would accept, each pointing somewhere else or meaning something else. */
export const REDIRECT_TRICKS = [
  '//evil.example/cb',
  'https://good.example@evil.example/cb',
  'https://good.example.evil.example/cb',
  'https://evil.example/cb?https://good.example/cb',
  'https://good.example/cb/',
  'https://good.example/cb/../cb',
  'https://good.example/%2e%2e/cb',
  'https://good.example/cb/%2e%2e/evil',
  'https://good.example/cb%2f..%2fevil',
  'https://good.example:8443/cb',
  'https://good.example:443/cb',
  'http://good.example/cb',
  'HTTPS://GOOD.EXAMPLE/cb',
  'https://good.example/CB',
  'https://good.example/cb?x=1',
  'https://good.example/cb#fragment',
  'https://good.example/cb\\@evil.example',
  ' https://good.example/cb',
  'https://good.example/cb%00',
  'https://good.example/cb\r\nSet-Cookie: evil=1',
  'javascript:alert(1)//https://good.example/cb',
];

forEachDatabase('named tricks', (database) => {
  let t: TestApp;
  let good: TestClient;
  let other: TestClient;
  let publicClient: TestClient;
  let browser: Browser;

  before(async () => {
    t = await startOAuthApp(database);
    good = await newClient(t, { redirectUris: [REGISTERED] });
    other = await newClient(t, { redirectUris: ['https://other.example/cb'] });
    publicClient = await newClient(t, { type: 'public', redirectUris: ['https://spa.example/cb'] });
    browser = (await signedInBrowser(t)).browser;
  });
  after(() => t.close());

  const snapshot = () => snapshotTables(t.deps.database.db, VOLATILE);

  test('header injection: CR/LF in state comes back percent-encoded in one Location header, and sets no cookie', async () => {
    const consented = await obtainCode(browser, good, { pkce: pkcePair() });
    assert.ok(consented, 'consent remembered for the client');
    const state = 'abc\r\nSet-Cookie: evil=1\r\nLocation: https://evil.example/';
    const before = await snapshot();
    // An error redirect (unknown scope) echoes the state without writing anything.
    const response = await browser.fetch(`/oauth/authorize?${authorizeQuery(good, { state, scope: 'admin', pkce: pkcePair() })}`);
    assert.equal(response.status, 302);
    const location = response.headers.get('location')!;
    assert.doesNotMatch(location, /[\r\n]/);
    assert.ok(location.startsWith(`${REGISTERED}?`), location);
    assert.equal(new URL(location).searchParams.get('state'), state, 'state returned unchanged (seed 4.1 rule 2)');
    assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith('evil=')));
    assert.equal(await snapshot(), before);
    // A request otherwise good issues no code for such a state: it is refused, and the refusal
    // carries the state back the same way.
    const refused = await browser.fetch(`/oauth/authorize?${authorizeQuery(good, { state, pkce: pkcePair() })}`);
    assert.equal(refused.status, 302);
    const refusal = new URL(refused.headers.get('location')!);
    assert.equal(refusal.searchParams.get('error'), 'invalid_request');
    assert.equal(refusal.searchParams.get('code'), null);
    assert.equal(refusal.searchParams.get('state'), state);
    assert.ok(!refused.headers.getSetCookie().some((c) => c.startsWith('evil=')));
    assert.equal(await snapshot(), before);
  });

  test('open redirect: every variant of a registered redirect_uri gets an error page and no redirect, and changes nothing', async () => {
    const before = await snapshot();
    for (const redirectUri of REDIRECT_TRICKS) {
      for (const signedIn of [true, false]) {
        const path = `/oauth/authorize?${authorizeQuery(good, { redirectUri, pkce: pkcePair() })}`;
        const response = signedIn ? await browser.fetch(path) : await fetch(t.baseUrl + path, { redirect: 'manual' });
        assert.equal(response.status, 400, `${JSON.stringify(redirectUri)} answered ${response.status}`);
        assert.equal(response.headers.get('location'), null, `${JSON.stringify(redirectUri)} must not redirect`);
        assert.match(response.headers.get('content-type') ?? '', /text\/html/);
        assert.doesNotMatch(await response.text(), /href="[^"]*evil\.example/);
      }
    }
    assert.equal(await snapshot(), before);
  });

  test('open redirect: a code redeemed with a variant of its redirect_uri is invalid_grant and issues nothing', async () => {
    for (const redirectUri of REDIRECT_TRICKS.filter((u) => !/[\r\n\0]/.test(u))) {
      const pkce = pkcePair();
      const code = await obtainCode(browser, good, { pkce });
      const before = await t.deps.database.db.selectFrom('access_tokens').select(t.deps.database.db.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const response = await tokenRequest(t, codeExchangeFields(good, code, pkce, { redirect_uri: redirectUri }));
      assert.equal(response.status, 400, redirectUri);
      assert.equal((await response.json()).error, 'invalid_grant');
      const afterCount = await t.deps.database.db.selectFrom('access_tokens').select(t.deps.database.db.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n), 'no token issued');
    }
  });

  test('open redirect: return_to that leaves the site is replaced by / on the sign-in form and after sign-in', async () => {
    const tricks = ['//evil.example', 'https://evil.example/', '/\\evil.example', '\\\\evil.example', '/\t/evil.example', 'javascript:alert(1)', '///evil.example', 'http:evil.example'];
    const { user } = await signedInBrowser(t);
    for (const returnTo of tricks) {
      const fresh = new Browser(t);
      const response = await fresh.signIn(user.username, undefined, returnTo);
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), '/', JSON.stringify(returnTo));
      const page = await fresh.fetch(`/login?return_to=${encodeURIComponent(returnTo)}`);
      assert.match(await page.text(), /name="return_to" value="\/"/);
    }
  });

  test('open redirect: an app a member registered, or whose redirect URIs a member changed, on the developer page gets its errors on this site\'s page until the member asking owns it or authorized it, or staff verified it since (RFC 9700 4.11.2)', async () => {
    // Any account may register an app, and an account costs one request: nobody answers for its redirect URIs.
    const { browser: owner, user: ownerUser } = await signedInBrowser(t);
    const csrf = hiddenFields(await (await owner.fetch('/settings/developers')).text()).find(([name]) => name === '_csrf')!;
    const registered = await owner.postForm('/settings/developers', [csrf, ['name', 'Landing'], ['type', 'public'], ['redirect_uris', 'https://evil.example/landing']]);
    assert.equal(registered.status, 303);
    const clientId = decodeURIComponent(/^\/settings\/developers\/([^?]+)\?/.exec(registered.headers.get('location') ?? '')![1]!);
    const landing: TestClient = { client: { clientId } as TestClient['client'], redirectUri: 'https://evil.example/landing' };
    const pageNotRedirect = (response: Response, what: string) => {
      assert.equal(response.status, 400, what);
      assert.equal(response.headers.get('location'), null, what);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/, what);
    };
    const badScope = () => `/oauth/authorize?${authorizeQuery(landing, { pkce: pkcePair(), scope: 'bogus' })}`;
    const silent = () => `/oauth/authorize?${authorizeQuery(landing, { pkce: pkcePair(), extra: { prompt: 'none' } })}`;
    const visitor = new Browser(t);
    pageNotRedirect(await visitor.fetch(badScope()), 'an unknown scope, signed out');
    pageNotRedirect(await visitor.fetch(silent()), 'prompt=none, signed out');
    const { browser: member } = await signedInBrowser(t);
    pageNotRedirect(await member.fetch(badScope()), 'an unknown scope, signed in, never authorized');
    pageNotRedirect(await member.fetch(`/oauth/authorize?${authorizeQuery(landing, { pkce: pkcePair(), extra: { response_mode: 'form_post', prompt: 'none' } })}`), 'form_post, never authorized');
    // Its owner tries it out: the errors are theirs to see at their own address.
    assert.equal(redirectParams(await owner.fetch(badScope())).get('error'), 'invalid_scope');
    // Once the member chose to authorize it, its errors go back to it as RFC 6749 4.1.2.1 says.
    await obtainCode(member, landing, { pkce: pkcePair() });
    assert.equal(redirectParams(await member.fetch(badScope())).get('error'), 'invalid_scope');
    // Staff vouch for it: from then on it is answered for, signed in or not.
    const moderator = await person(t, 'moderator', { twoStep: true });
    assert.equal((await (await appReview(moderator, clientId)).verify('checked with the owner')).status, 303);
    assert.equal(redirectParams(await visitor.fetch(silent())).get('error'), 'login_required');
    // The owner adds an address after staff looked: they vouched for the old ones only (attack84).
    const redirectUris = (id: string, uris: string[]) => owner.postForm(`/settings/developers/${id}/redirect-uris`, [csrf, ['redirect_uris', uris.join('\n')]]);
    const appPage = async () => (await owner.fetch(`/settings/developers/${clientId}`)).text();
    assert.match(await appPage(), /Staff have verified this app\. Saving another name, description or homepage, or other redirect URIs/, 'the owner is told before changing them');
    assert.equal((await redirectUris(clientId, ['https://evil.example/landing', 'https://evil.example/other'])).status, 303);
    assert.doesNotMatch(await appPage(), /Staff have verified this app/);
    pageNotRedirect(await visitor.fetch(`/oauth/authorize?${authorizeQuery({ ...landing, redirectUri: 'https://evil.example/other' }, { pkce: pkcePair(), scope: 'bogus' })}`), 'a redirect URI added after verification');
    // An app the operator registered (the command line's) is unchanged: its errors go back to it, signed in or not...
    assert.equal(redirectParams(await new Browser(t).fetch(`/oauth/authorize?${authorizeQuery(good, { pkce: pkcePair(), scope: 'bogus' })}`)).get('error'), 'invalid_scope');
    // ...until the member the operator made its owner changes its redirect URIs: then they are that member's claim.
    const operators = await newClient(t, { ownerId: ownerUser.id, redirectUris: ['https://ops.example/cb'] });
    assert.equal(redirectParams(await visitor.fetch(`/oauth/authorize?${authorizeQuery(operators, { pkce: pkcePair(), scope: 'bogus' })}`)).get('error'), 'invalid_scope');
    assert.equal((await redirectUris(operators.client.clientId, ['https://ops.example/cb', 'https://evil.example/ops'])).status, 303);
    pageNotRedirect(await visitor.fetch(`/oauth/authorize?${authorizeQuery({ ...operators, redirectUri: 'https://evil.example/ops' }, { pkce: pkcePair(), scope: 'bogus' })}`), 'an operator\'s app whose owner added a redirect URI');
  });

  test('PKCE downgrade: no challenge from a public client, method plain, a missing verifier or the challenge as verifier are all refused', async () => {
    const before = await snapshot();
    for (const options of [{ pkce: null }, { pkce: null, extra: { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' } }, { pkce: null, extra: { code_challenge: 'a'.repeat(43) } }] as AuthorizeOptions[]) {
      const response = await browser.fetch(`/oauth/authorize?${authorizeQuery(publicClient, options)}`);
      assert.equal(response.status, 302);
      const back = new URL(response.headers.get('location')!);
      assert.equal(back.searchParams.get('error'), 'invalid_request', JSON.stringify(options));
      assert.equal(back.searchParams.get('code'), null);
    }
    assert.equal(await snapshot(), before, 'a refused authorization request stores nothing');

    for (const verifier of [undefined, 'challenge', '']) {
      const pkce = pkcePair();
      const code = await obtainCode(browser, publicClient, { pkce });
      const fields = codeExchangeFields(publicClient, code, null);
      if (verifier === 'challenge') fields.code_verifier = pkce.challenge;
      else if (verifier === '') fields.code_verifier = '';
      const tokensBefore = await snapshotTables(t.deps.database.db, VOLATILE).then((s) => s.split('\n').filter((l) => l.startsWith('access_tokens:') || l.startsWith('refresh_tokens:')).join());
      const response = await tokenRequest(t, fields);
      assert.ok(response.status === 400, `${verifier}: ${response.status}`);
      assert.ok(['invalid_grant', 'invalid_request'].includes((await response.json()).error));
      const tokensAfter = await snapshotTables(t.deps.database.db, VOLATILE).then((s) => s.split('\n').filter((l) => l.startsWith('access_tokens:') || l.startsWith('refresh_tokens:')).join());
      assert.equal(tokensAfter, tokensBefore, 'no token issued');
    }
  });

  test("a code, a refresh token or an access token of another client is refused, and the owner's tokens keep working", async () => {
    const pkce = pkcePair();
    const code = await obtainCode(browser, good, { pkce });
    const stolenCode = await tokenRequest(t, { ...codeExchangeFields(good, code, pkce), ...clientFields(other) });
    assert.equal(stolenCode.status, 400);
    assert.equal((await stolenCode.json()).error, 'invalid_grant');

    const tokens = await obtainTokens(t, browser, good);
    const before = await snapshot();
    const stolenRefresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(other) });
    assert.equal(stolenRefresh.status, 400);
    assert.equal((await stolenRefresh.json()).error, 'invalid_grant');
    const revoke = await fetch(`${t.baseUrl}/api/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, ...clientFields(other) }),
    });
    assert.equal(revoke.status, 200, 'RFC 7009 2.2: the same answer as for an unknown token');
    assert.deepEqual(await introspect(t, other, tokens.access_token), { active: false });
    assert.equal(await snapshot(), before, 'nothing stored changed');
    assert.equal((await introspect(t, good, tokens.access_token)).active, true);
    const own = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientFields(good) });
    assert.equal(own.status, 200, 'the owner can still refresh');
  });

  test('a JWT with alg none where a code, a refresh token or a token belongs is refused and changes nothing', async () => {
    const jwt = unsignedJwt({ iss: t.baseUrl, sub: '1', aud: good.client.clientId, exp: Math.floor(Date.now() / 1000) + 3600 });
    const before = await snapshot();
    const asCode = await tokenRequest(t, { grant_type: 'authorization_code', code: jwt, redirect_uri: good.redirectUri, ...clientFields(good) });
    assert.equal(asCode.status, 400);
    assert.equal((await asCode.json()).error, 'invalid_grant');
    const asRefresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: jwt, ...clientFields(good) });
    assert.equal(asRefresh.status, 400);
    assert.equal((await asRefresh.json()).error, 'invalid_grant');
    const asAssertion = await tokenRequest(t, {
      grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: good.redirectUri, client_id: good.client.clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: jwt,
    });
    assert.equal(asAssertion.status, 401, 'an unsigned client assertion authenticates nobody');
    assert.equal((await asAssertion.json()).error, 'invalid_client');
    assert.deepEqual(await introspect(t, good, jwt), { active: false });
    assert.equal(await snapshot(), before);
  });
});
