/**
 * A change to a client counts at the token endpoint from the very next request (issue 35): on
 * SQLite the client's row is remembered between token requests (`clientLookup`,
 * src/storage/repositories/oauth/clients.ts), and must be read again once the client changed,
 * whether the change came through the instance that serves the token request or through another
 * instance on the same database. Over real HTTP on both databases.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { startAppsForSuite } from '../support/instances.js';
import { readOnlyField, signedInMember } from '../site/visitor.js';
import { person } from '../staff/support.js';
import { PASSWORD, newClient, tokenRequest, unique } from './helpers.js';

forEachDatabase('a change to a client counts from the next token request', (database) => {
  /** Serves the token requests. */
  let serving: TestApp;
  /** Another instance on the same database (on SQLite, another connection to the same file). */
  let other: TestApp;
  startAppsForSuite(database, 2, {}, (apps) => { [serving, other] = apps; });

  /**
   * What the token endpoint of `serving` answers a refresh with an unknown token: `invalid_grant`
   * once the client authenticated, `invalid_client` when it was refused.
   */
  async function answer(clientId: string, secret: string): Promise<string> {
    const response = await tokenRequest(serving, { grant_type: 'refresh_token', refresh_token: 'svcr_unknown', client_id: clientId, client_secret: secret });
    const body = (await response.json()) as { error?: string };
    return body.error ?? String(response.status);
  }

  /** An owner signed in on `via`, and their confidential app, whose row `serving` has looked up (and so remembers) already. */
  async function ownedApp(via: TestApp): Promise<{ owner: Awaited<ReturnType<typeof signedInMember>>; clientId: string; secret: string }> {
    const owner = await signedInMember(via, unique('dev'), PASSWORD);
    const { client, secret } = await newClient(serving, { ownerId: owner.user.id });
    for (let i = 0; i < 2; i++) assert.equal(await answer(client.clientId, secret!), 'invalid_grant', 'the client authenticates');
    return { owner, clientId: client.clientId, secret: secret! };
  }

  for (const [where, via] of [['the same instance', () => serving], ['another instance', () => other]] as const) {
    test(`an app its owner deactivates on ${where} is refused at the next token request`, async () => {
      const { owner, clientId, secret } = await ownedApp(via());
      assert.equal((await owner.visitor.post(`/settings/developers/${clientId}/deactivate`, { confirm: 'yes' })).status, 303);
      assert.equal(await answer(clientId, secret), 'invalid_client');
    });

    test(`an app staff deactivate on ${where} is refused at the next token request, and accepted at the next once made active again`, async () => {
      const moderator = await person(via(), 'moderator', { twoStep: true });
      const { clientId, secret } = await ownedApp(via());
      const status = (value: string) => moderator.visitor.post(`/admin/apps/${clientId}/status`, { status: value, reason: 'checked with the owner', confirm: 'yes' });
      assert.equal((await status('deactivated')).status, 303);
      assert.equal(await answer(clientId, secret), 'invalid_client');
      assert.equal((await status('active')).status, 303);
      assert.equal(await answer(clientId, secret), 'invalid_grant');
    });

    test(`a secret rotated on ${where} counts at the next token request: the new one accepted, the old one refused`, async () => {
      const { owner, clientId, secret: old } = await ownedApp(via());
      const rotated = await owner.visitor.post(`/settings/developers/${clientId}/rotate-secret`, { confirm: 'yes' });
      assert.equal(rotated.status, 303);
      const current = readOnlyField((await owner.visitor.get(rotated.location!)).text, 'client-secret');
      assert.ok(current);
      assert.equal(await answer(clientId, current), 'invalid_grant', 'the new secret');
      assert.equal(await answer(clientId, old), 'invalid_client', 'the old one (INTERFACE section 2: a rotated secret fails at once)');
      assert.equal(await answer(clientId, current), 'invalid_grant');
    });
  }
});
