/**
 * Rotating a client secret: by default the old one fails at once (INTERFACE section 2, seed table
 * 7.1). With PREVIOUS_CLIENT_SECRET_HOURS set, it keeps working until its owner deletes it or
 * that time passes (as GitHub does for OAuth apps). Over real HTTP on both databases, with an
 * injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PREVIOUS_CLIENT_SECRET_MAX_HOURS } from '../../src/config/settings.js';
import { machineTime } from '../../src/core/site-time.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Visitor, readOnlyField, signedInMember } from '../site/visitor.js';
import { PASSWORD, startOAuthApp, unique } from './helpers.js';

forEachDatabase('client secret rotation', (database) => {
  const PREVIOUS_SECRET_LIFETIME_MS = PREVIOUS_CLIENT_SECRET_MAX_HOURS * 3_600_000;
  /** A site whose operator keeps a rotated secret working for the longest time allowed. */
  let t: TestApp;
  /** A site with the default settings. */
  let plain: TestApp;
  before(async () => {
    t = await startOAuthApp(database, { env: { PREVIOUS_CLIENT_SECRET_HOURS: String(PREVIOUS_CLIENT_SECRET_MAX_HOURS) } });
    plain = await startOAuthApp(database);
  });
  after(async () => {
    await t.close();
    await plain.close();
  });

  /** A member with a confidential app registered on the site, and its first secret. */
  async function developerWithApp(site: TestApp = t): Promise<{ visitor: Visitor; username: string; clientId: string; secret: string }> {
    const username = unique('dev');
    const { user, visitor } = await signedInMember(site, username, PASSWORD);
    const created = await visitor.post('/settings/developers', {
      name: 'Rotating App', description: '', homepage: 'https://rotating.example', redirect_uris: 'https://rotating.example/cb', type: 'confidential',
    });
    assert.equal(created.status, 303);
    const [client] = await site.deps.stores.clients.listByOwner(user.id);
    const secret = readOnlyField((await visitor.get(created.location!)).text, 'client-secret');
    assert.ok(client && secret);
    return { visitor, username, clientId: client.clientId, secret };
  }

  /** Rotates on the app's page, confirmed; the new secret as the page shows it once. */
  async function rotate(visitor: Visitor, clientId: string): Promise<string> {
    const rotated = await visitor.post(`/settings/developers/${clientId}/rotate-secret`, { confirm: 'yes' });
    assert.equal(rotated.status, 303);
    const secret = readOnlyField((await visitor.get(rotated.location!)).text, 'client-secret');
    assert.ok(secret);
    return secret;
  }

  /** The status of an introspection request authenticated with `secret`: 200 when the secret is accepted, 401 when not. */
  async function authenticates(clientId: string, secret: string, method: 'post' | 'basic' = 'post', site: TestApp = t): Promise<number> {
    const body = new URLSearchParams({ token: 'svco_not_a_token' });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (method === 'post') {
      body.set('client_id', clientId);
      body.set('client_secret', secret);
    } else {
      headers.authorization = `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
    }
    const response = await fetch(`${site.baseUrl}/api/oauth/introspect`, { method: 'POST', headers, body: body.toString() });
    await response.arrayBuffer();
    return response.status;
  }

  test('by default a rotated client secret fails at once with invalid_client (INTERFACE section 2, seed table 7.1)', async () => {
    const { visitor, clientId, secret: old } = await developerWithApp(plain);
    const current = await rotate(visitor, clientId);
    for (const method of ['post', 'basic'] as const) {
      assert.equal(await authenticates(clientId, old, method, plain), 401, `old secret, ${method}`);
      assert.equal(await authenticates(clientId, current, method, plain), 200, `new secret, ${method}`);
    }
    const refused = await fetch(`${plain.baseUrl}/api/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'svcr_unknown', client_id: clientId, client_secret: old }).toString(),
    });
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_client');
    const page = (await visitor.get(`/settings/developers/${clientId}`)).text;
    assert.ok(!page.includes('delete-previous-secret'), 'no old secret is listed: there is none');
  });

  test('after a rotation the old secret and the new one both authenticate, in the body and with Basic', async () => {
    const { visitor, clientId, secret: old } = await developerWithApp();
    const current = await rotate(visitor, clientId);
    assert.notEqual(current, old);
    for (const method of ['post', 'basic'] as const) {
      assert.equal(await authenticates(clientId, old, method), 200, `old secret, ${method}`);
      assert.equal(await authenticates(clientId, current, method), 200, `new secret, ${method}`);
      assert.equal(await authenticates(clientId, `${current}x`, method), 401, `a wrong secret, ${method}`);
    }
  });

  test('a second rotation ends the secret two rotations back at once', async () => {
    const { visitor, clientId, secret: first } = await developerWithApp();
    const second = await rotate(visitor, clientId);
    const third = await rotate(visitor, clientId);
    assert.equal(await authenticates(clientId, first), 401);
    assert.equal(await authenticates(clientId, second), 200);
    assert.equal(await authenticates(clientId, third), 200);
  });

  test('the app page lists the old secret with its expiry, and deletes it only once asked; it then fails at once', async () => {
    const { visitor, clientId, secret: old } = await developerWithApp();
    const pageBefore = (await visitor.get(`/settings/developers/${clientId}`)).text;
    assert.ok(!pageBefore.includes('delete-previous-secret'), 'no old secret before any rotation');
    const current = await rotate(visitor, clientId);
    const expiresAt = t.clock.now() + PREVIOUS_SECRET_LIFETIME_MS;
    const page = (await visitor.get(`/settings/developers/${clientId}`)).text;
    assert.match(page, /The old secret works until/);
    assert.ok(page.includes(`datetime="${machineTime(expiresAt)}"`), 'the expiry is shown');
    assert.match(page, /action="\/settings\/developers\/[0-9a-f]+\/delete-previous-secret"[\s\S]*Delete old secret…/);

    const asked = await visitor.post(`/settings/developers/${clientId}/delete-previous-secret`, {});
    assert.equal(asked.status, 200);
    assert.match(asked.text, /Delete the old secret of Rotating App\?[\s\S]*stops working at once/);
    assert.equal(await authenticates(clientId, old), 200, 'asking changed nothing');

    const deleted = await visitor.post(`/settings/developers/${clientId}/delete-previous-secret`, { confirm: 'yes' });
    assert.equal(deleted.status, 303);
    assert.match((await visitor.get(deleted.location!)).text, /The old secret was deleted/);
    assert.equal(await authenticates(clientId, old), 401);
    assert.equal(await authenticates(clientId, current), 200);
    assert.ok(!(await visitor.get(`/settings/developers/${clientId}`)).text.includes('delete-previous-secret'), 'no longer listed');
  });

  test('another member cannot delete the old secret of an app they do not own', async () => {
    const { visitor, clientId, secret: old } = await developerWithApp();
    await rotate(visitor, clientId);
    const stranger = (await signedInMember(t, unique('stranger'), PASSWORD)).visitor;
    assert.equal((await stranger.post(`/settings/developers/${clientId}/delete-previous-secret`, { confirm: 'yes' })).status, 404);
    assert.equal(await authenticates(clientId, old), 200);
  });

  test('a deactivated app\'s old secret cannot be deleted: refused as every other change to a deactivated app', async () => {
    const { visitor, clientId } = await developerWithApp();
    await rotate(visitor, clientId);
    const kept = (await t.deps.stores.clients.findById(clientId))?.previousSecret;
    assert.equal((await visitor.post(`/settings/developers/${clientId}/deactivate`, { confirm: 'yes' })).status, 303);
    for (const body of [{}, { confirm: 'yes' }] as Array<Record<string, string>>) {
      const refused = await visitor.post(`/settings/developers/${clientId}/delete-previous-secret`, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.match(refused.text, /A deactivated application cannot be changed/);
    }
    assert.deepEqual((await t.deps.stores.clients.findById(clientId))?.previousSecret, kept);
  });

  test('a leak report of the old secret deactivates the app while the old secret still works', async () => {
    const { visitor, clientId, secret: old } = await developerWithApp();
    const current = await rotate(visitor, clientId);
    const report = await fetch(`${t.baseUrl}/api/credentials/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ credentials: [old] }),
    });
    assert.equal(report.status, 202);
    assert.equal((await t.deps.stores.clients.findById(clientId))?.status, 'deactivated');
    assert.equal(await authenticates(clientId, current), 401);
  });

  // Last: it moves the shared clock a week on.
  test('the old secret stops working 7 days after the rotation, and leaves the app page; the new one keeps working', async () => {
    const { visitor, username, clientId, secret: old } = await developerWithApp();
    const current = await rotate(visitor, clientId);
    t.clock.advance(PREVIOUS_SECRET_LIFETIME_MS - 1);
    assert.equal(await authenticates(clientId, old), 200, 'a moment before its 7 days are up');
    t.clock.advance(1);
    assert.equal(await authenticates(clientId, old), 401, 'when its 7 days are up');
    assert.equal(await authenticates(clientId, current), 200);
    await visitor.signIn(username, PASSWORD);
    assert.ok(!(await visitor.get(`/settings/developers/${clientId}`)).text.includes('delete-previous-secret'), 'an expired secret is not listed');
    const late = await visitor.post(`/settings/developers/${clientId}/delete-previous-secret`, {});
    assert.equal(late.status, 303, 'nothing left to ask about');
  });
});
