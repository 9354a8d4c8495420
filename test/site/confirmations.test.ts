/**
 * Destructive actions ask first, and new secrets are shown once after a redirect (issue 18
 * item 7), over real HTTP on each database: a POST without `confirm=yes` changes nothing and
 * answers a page that says what will happen; the secret of a new personal token or client
 * secret reaches its page sealed in a one-time row opened by a short-lived cookie.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { registerClient } from '../../src/core/oauth/clients.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { ONE_TIME_SECRET_MS } from '../../src/core/credentials/one-time-secrets.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { readOnlyField, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const TOKEN_FORM = { name: 'nightly', scopes: ['profile:read'], expires_in_days: '30', password: PASSWORD };

forEachDatabase('destructive actions and secrets shown once', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const member = () => signedInMember(t, `confirmer${++counter}`, PASSWORD);

  /** A user with one of everything a destructive action ends: a personal token, an own app, two authorized apps with live tokens. */
  async function equipped() {
    const { user, visitor } = await member();
    const { stores } = t.deps;
    const now = t.clock.now();
    const { record: token } = await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'kept', scopes: ['profile:read'], expiresInDays: 30 });
    const own = await registerClient(stores, t.clock, { name: 'Own App', type: 'confidential', redirectUris: ['https://own.example/cb'], ownerId: user.id });
    const authorized: Array<{ clientId: string; access: string; accessHash: string; grantId: number }> = [];
    for (const name of ['Photo Printer', 'Calendar Sync']) {
      const { client } = await registerClient(stores, t.clock, { name, type: 'public', redirectUris: ['https://third.example/cb'] });
      await stores.consents.save(user.id, client.clientId, 'profile:read', now);
      const grant = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
      const access = generateToken('access');
      const accessHash = hashSecret(access);
      await stores.tokens.insertAccess({ tokenHash: accessHash, grantId: grant.id, clientId: client.clientId, userId: user.id, scope: grant.scope, createdAt: now, expiresAt: now + 3_600_000 });
      authorized.push({ clientId: client.clientId, access, accessHash, grantId: grant.id });
    }
    return { user, visitor, token, own: own.client, authorized };
  }

  type Equipped = Awaited<ReturnType<typeof equipped>>;
  /** Each destructive action: its form, and what its confirmation page must say. */
  const ACTIONS: Array<{ label: string; path: (e: Equipped) => string; fields: (e: Equipped) => Record<string, string>; says: RegExp }> = [
    { label: 'revoking a personal token', path: () => '/settings/tokens/revoke', fields: (e) => ({ token_id: String(e.token.id) }), says: /Revoke the token “kept”\?[\s\S]*401/ },
    { label: 'revoking every app', path: () => '/settings/applications/revoke-all', fields: () => ({}), says: /Revoke access for every application\?(?=[\s\S]*Photo Printer)(?=[\s\S]*Calendar Sync)/ },
    { label: 'rotating a client secret', path: (e) => `/settings/developers/${e.own.clientId}/rotate-secret`, fields: () => ({}), says: /Rotate the secret of Own App\?[\s\S]*current secret stops working at once/ },
    { label: 'deactivating an app', path: (e) => `/settings/developers/${e.own.clientId}/deactivate`, fields: () => ({}), says: /Deactivate Own App\?[\s\S]*stops working at once/ },
  ];

  /** Everything the actions could end, as stored. */
  async function state(e: Equipped): Promise<unknown> {
    const { stores } = t.deps;
    const own = await stores.clients.findById(e.own.clientId);
    return {
      token: (await stores.personalTokens.listForUser(e.user.id)).map((x) => x.revokedAt),
      own: [own?.status, own?.secretHash],
      consents: (await stores.consents.listForUser(e.user.id)).map((c) => c.clientId).sort(),
      grants: await Promise.all(e.authorized.map(async (a) => (await stores.grants.findById(a.grantId))?.revokedAt)),
    };
  }

  test('every destructive action first answers a confirmation page that says what will happen, with confirm and the CSRF token', async () => {
    const e = await equipped();
    const csrf = await e.visitor.csrf();
    for (const action of ACTIONS) {
      const response = await e.visitor.post(action.path(e), action.fields(e));
      assert.equal(response.status, 200, action.label);
      assert.match(response.text, action.says, action.label);
      const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(response.text.slice(response.text.indexOf('id="confirm-heading"')));
      assert.equal(form?.[1], action.path(e), `${action.label}: the form repeats the request`);
      assert.match(form![2]!, /<input type="hidden" name="confirm" value="yes">/, action.label);
      assert.match(form![2]!, new RegExp(`<input type="hidden" name="_csrf" value="${csrf}">`), action.label);
      for (const [name, value] of Object.entries(action.fields(e))) {
        assert.match(form![2]!, new RegExp(`<input type="hidden" name="${name}" value="${value}">`), `${action.label}: ${name}`);
      }
    }
  });

  test('without confirm=yes no destructive action changes anything', async () => {
    const e = await equipped();
    const before = await state(e);
    for (const action of ACTIONS) {
      for (const confirm of [undefined, 'no', '1', 'YES']) {
        const response = await e.visitor.post(action.path(e), { ...action.fields(e), ...(confirm === undefined ? {} : { confirm }) });
        assert.equal(response.status, 200, `${action.label} with confirm=${confirm}`);
      }
    }
    assert.deepEqual(await state(e), before);
    for (const a of e.authorized) assert.equal((await t.deps.stores.tokens.findAccessBearer(a.accessHash))?.revokedAt, null);
  });

  test('the confirmed POST acts: each action ends what its page said it would', async () => {
    const e = await equipped();
    const { stores } = t.deps;
    const act = async (index: number) => {
      const action = ACTIONS[index]!;
      const response = await e.visitor.post(action.path(e), { ...action.fields(e), confirm: 'yes' });
      assert.equal(response.status, 303, action.label);
      return response;
    };
    await act(0);
    assert.notEqual((await stores.personalTokens.listForUser(e.user.id))[0]?.revokedAt, null, 'token revoked');
    await act(2);
    assert.notEqual((await stores.clients.findById(e.own.clientId))?.secretHash, e.own.secretHash, 'secret rotated');
    await act(3);
    assert.equal((await stores.clients.findById(e.own.clientId))?.status, 'deactivated');
  });

  test('withdrawing one app asks first on its own page, and its form (INTERFACE 10: client_id and the CSRF field) acts as sent', async () => {
    const e = await equipped();
    const page = (await e.visitor.get('/settings/applications')).text;
    const form = new RegExp(`<form method="post" action="/settings/applications/revoke">((?:(?!</form>)[\\s\\S])*?name="client_id" value="${e.authorized[0]!.clientId}"[\\s\\S]*?)</form>`).exec(page);
    assert.ok(form, 'a form per app');
    assert.match(form[1]!, /<details class="ask-first">\s*<summary[^>]*>Revoke access…<\/summary>[\s\S]*stops working at once[\s\S]*<button type="submit"[^>]*>Yes, revoke access<\/button>\s*<\/details>/,
      'the button that acts shows only once the person opened what it will do');
    const response = await e.visitor.post('/settings/applications/revoke', { client_id: e.authorized[0]!.clientId });
    assert.equal(response.status, 303);
    assert.equal(await t.deps.stores.consents.find(e.user.id, e.authorized[0]!.clientId), undefined, 'consent withdrawn');
    assert.ok(await t.deps.stores.consents.find(e.user.id, e.authorized[1]!.clientId), 'the other app kept');
    assert.notEqual((await t.deps.stores.tokens.findAccessBearer(e.authorized[0]!.accessHash))?.revokedAt, null);
  });

  test('revoke all withdraws every consent and revokes every token of every app, after a confirmation', async () => {
    const e = await equipped();
    for (const a of e.authorized) {
      assert.equal((await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${a.access}` } })).status, 200, 'live before');
    }
    const page = await e.visitor.get('/settings/applications');
    assert.match(page.text, /<form method="post" action="\/settings\/applications\/revoke-all">/);
    const response = await e.visitor.post('/settings/applications/revoke-all', { confirm: 'yes' });
    assert.equal(response.status, 303);
    assert.equal(response.location, '/settings/applications?notice=all-access-revoked');
    assert.deepEqual(await t.deps.stores.consents.listForUser(e.user.id), []);
    for (const a of e.authorized) {
      const api = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${a.access}` } });
      assert.equal(api.status, 401, 'the app’s access token fails at the API');
    }
    const shown = await e.visitor.get(response.location!);
    assert.match(shown.text, /Access revoked for every application/);
    assert.match(shown.text, /You have not authorized any applications/);
    const logged = (await t.deps.stores.securityEvents.listForUser(e.user.id, 0, 50)).items.filter((x) => x.kind === 'app.access_withdrawn');
    assert.deepEqual(logged.map((x) => x.detail.client_id).sort(), e.authorized.map((a) => a.clientId).sort(), 'each app in the security log');
  });

  test('creating a token redirects (post/redirect/get): reloading the page creates no second token', async () => {
    const { user, visitor } = await member();
    const created = await visitor.post('/settings/tokens', TOKEN_FORM);
    assert.equal(created.status, 303);
    assert.equal(created.location, '/settings/tokens');
    for (let i = 0; i < 3; i++) assert.equal((await visitor.get('/settings/tokens')).status, 200);
    assert.equal((await t.deps.stores.personalTokens.listForUser(user.id)).length, 1);
  });

  test('a new token is shown exactly once, to its own browser, and never in an address or the database', async () => {
    const { user, visitor } = await member();
    const created = await visitor.post('/settings/tokens', TOKEN_FORM);
    assert.doesNotMatch(created.location ?? '', /svcp_/);
    const cookie = visitor.cookies.get('svc_reveal');
    assert.ok(cookie, 'a one-time cookie carries it to the page');
    assert.match(created.headers.getSetCookie().join('\n'), /svc_reveal=[^;]+;[^\n]*HttpOnly/);

    // A stranger holding the cookie (copied from the browser) sees nothing: it opens this user's secret only.
    const { visitor: stranger } = await member();
    stranger.cookies.set('svc_reveal', cookie);
    assert.equal(readOnlyField((await stranger.get('/settings/tokens')).text, 'new-token'), undefined);

    const rows = JSON.stringify((await sql`select * from one_time_secrets`.execute(t.deps.database.db)).rows);
    const first = await visitor.get('/settings/tokens');
    const token = readOnlyField(first.text, 'new-token');
    assert.match(token ?? '', /^svcp_/);
    assert.equal((await t.deps.stores.personalTokens.findBearer(hashSecret(token!)))?.user.id, user.id);
    assert.ok(!rows.includes(token!), 'the database held it sealed only');
    assert.match(first.text, /Token “nightly” created/);

    const again = await visitor.get('/settings/tokens');
    assert.equal(readOnlyField(again.text, 'new-token'), undefined, 'not on a reload');
    visitor.cookies.set('svc_reveal', cookie);
    assert.equal(readOnlyField((await visitor.get('/settings/tokens')).text, 'new-token'), undefined, 'not with the same cookie again');
  });

  test('a new token not shown within its few minutes is never shown', async () => {
    const { visitor } = await member();
    await visitor.post('/settings/tokens', TOKEN_FORM);
    t.clock.advance(ONE_TIME_SECRET_MS + 1000);
    assert.equal(readOnlyField((await visitor.get('/settings/tokens')).text, 'new-token'), undefined);
  });

  test('a new or rotated client secret is shown exactly once on its app page, after a redirect', async () => {
    const { user, visitor } = await member();
    const registered = await visitor.post('/settings/developers', { name: 'Shown Once', redirect_uris: 'https://once.example/cb', type: 'confidential' });
    assert.equal(registered.status, 303);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    assert.doesNotMatch(registered.location ?? '', /svcs_/);
    const secret = readOnlyField((await visitor.get(registered.location!)).text, 'client-secret');
    assert.equal(hashSecret(secret ?? ''), client!.secretHash);
    assert.equal(readOnlyField((await visitor.get(registered.location!)).text, 'client-secret'), undefined, 'not on a reload');

    const rotated = await visitor.post(`/settings/developers/${client!.clientId}/rotate-secret`, { confirm: 'yes' });
    assert.equal(rotated.status, 303);
    const page = await visitor.get(rotated.location!);
    const next = readOnlyField(page.text, 'client-secret');
    assert.ok(next && next !== secret);
    assert.match(page.text, /The old one no longer works/);
    assert.equal(readOnlyField((await visitor.get(rotated.location!)).text, 'client-secret'), undefined, 'not on a reload');
    const old = await fetch(`${t.baseUrl}/api/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'svcr_x', client_id: client!.clientId, client_secret: secret! }),
    });
    // A rotated secret fails at once (INTERFACE section 2; test/oauth/client-secret-rotation.test.ts).
    assert.equal(old.status, 401);
    assert.equal(((await old.json()) as { error: string }).error, 'invalid_client');
  });

  test('the page that shows a secret offers a Copy button from a script file, hidden without JavaScript, under a CSP without inline script', async () => {
    const { visitor } = await member();
    await visitor.post('/settings/tokens', TOKEN_FORM);
    const page = await visitor.get('/settings/tokens');
    assert.match(page.text, /<script src="\/static\/copy\.js" defer><\/script>/);
    assert.match(page.text, /<button type="button" class="secondary" data-copy="new-token" data-copied-label="Copied" data-copy-failed="Press Ctrl\+C to copy" hidden>Copy<\/button>/);
    assert.doesNotMatch(page.text, /<script>/, 'no inline script');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    const script = await fetch(`${t.baseUrl}/static/copy.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    assert.match(await script.text(), /navigator\.clipboard/);
    assert.doesNotMatch((await visitor.get('/settings/tokens')).text, /copy\.js/, 'no script on a page without a secret');
  });
});
