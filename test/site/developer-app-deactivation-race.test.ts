/**
 * An owner's change on an app's page racing staff deactivation, over real HTTP on every database:
 * the route reads the app active, staff deactivate it before the route's write, and the write,
 * conditional on the app being active (`ClientStore`), changes nothing; the page answers as for
 * an app it read deactivated, and nothing is recorded or mailed as changed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient, rotateClientSecret } from '../../src/core/oauth/clients.js';
import type { ClientStore } from '../../src/core/oauth/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const DEACTIVATED = /A deactivated application cannot be changed/;

/** Each change on an app's page: its form, what it sends, the store's write it makes, and the page's answer for a deactivated app. */
const CHANGES: ReadonlyArray<{ form: string; fields: Record<string, string>; write: keyof ClientStore; refusal: RegExp; previousSecret?: true }> = [
  { form: 'details', fields: { name: 'Revived', description: '', homepage: '' }, write: 'setDetails', refusal: DEACTIVATED },
  { form: 'redirect-uris', fields: { redirect_uris: 'https://elsewhere.example/cb' }, write: 'setRedirectUris', refusal: DEACTIVATED },
  { form: 'logout-uris', fields: { post_logout_redirect_uris: 'https://elsewhere.example/bye', backchannel_logout_uri: 'https://elsewhere.example/bc' }, write: 'setLogoutUris', refusal: DEACTIVATED },
  { form: 'pushed-requests', fields: { require_pushed_authorization_requests: '1' }, write: 'setRequirePushedAuthorizationRequests', refusal: DEACTIVATED },
  { form: 'rotate-secret', fields: { confirm: 'yes' }, write: 'rotateSecret', refusal: /Only an active confidential application has a secret to rotate/ },
  { form: 'delete-previous-secret', fields: { confirm: 'yes' }, write: 'deletePreviousSecret', refusal: DEACTIVATED, previousSecret: true },
];

forEachDatabase('an owner\'s change racing staff deactivation', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('an owner\'s change racing staff deactivation is refused as for a deactivated app, and does not land on it', async () => {
    for (const change of CHANGES) {
      const { user, visitor } = await signedInMember(t, `race${++counter}`, PASSWORD);
      const { client } = await registerClient(t.deps.stores, t.clock, {
        name: 'Race App', type: 'confidential', redirectUris: ['https://race.example/cb'], ownerId: user.id, memberRegistered: true,
      });
      // A previous secret still accepted, for the page to offer its deletion.
      if (change.previousSecret) await rotateClientSecret(t.deps.stores, t.clock, client.clientId, 24);
      const { stores } = t.deps;
      const { clients, transaction } = stores;
      let deactivated: unknown;
      /** Staff deactivate the app after the route read it active, just before its write through `within` (the stores or a transaction's). */
      const racing = (within: ClientStore) => {
        const write = within[change.write] as (...args: unknown[]) => Promise<unknown>;
        Object.assign(within, {
          [change.write]: async (...args: unknown[]) => {
            deactivated = await within.setStatus(client.clientId, 'deactivated', t.clock.now());
            return write.apply(within, args);
          },
        });
        return () => Object.assign(within, { [change.write]: write });
      };
      const restore = racing(clients);
      // A rotation writes in a transaction, with the sealed copy of its secret: the race is in there.
      stores.transaction = <T>(work: (tx: Stores) => Promise<T>) => transaction.call(stores, (tx: Stores) => { racing(tx.clients); return work(tx); }) as Promise<T>;
      try {
        const refused = await visitor.post(`/settings/developers/${client.clientId}/${change.form}`, change.fields);
        assert.equal(refused.status, 400, change.form);
        assert.match(refused.text, change.refusal, change.form);
      } finally {
        restore();
        stores.transaction = transaction;
      }
      assert.deepEqual(await clients.findById(client.clientId), deactivated, `${change.form}: nothing written`);
      assert.deepEqual(t.audit.filter((e) => 'clientId' in e && e.clientId === client.clientId).map((e) => e.audit), [], `${change.form}: no change recorded`);
      assert.deepEqual((await t.deps.stores.securityEvents.listForUser(user.id, 0, 10)).items.filter((e) => e.kind.startsWith('client')), [], `${change.form}: none in the security log`);
    }
  });
});
