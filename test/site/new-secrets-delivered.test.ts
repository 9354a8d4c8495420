/**
 * A new secret the database keeps is one its owner was shown (a client secret made or rotated, a
 * personal token): the write, its sealed copy for the page that shows it once and the owner's
 * security-log line land in one transaction, and what follows the commit (the notice mail, the
 * audit line) never answers in place of the redirect. Over real HTTP on both databases, each
 * failure made real by a trigger that refuses one table's inserts while the request runs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase, whileInsertsFail as failingInserts } from '../support/databases.js';
import { PASSWORD, startOAuthApp, unique } from '../oauth/helpers.js';
import { type Visitor, readOnlyField, signedInMember } from './visitor.js';

forEachDatabase('a new secret is always shown to its owner', (database) => {
  let t: TestApp;
  before(async () => {
    // Mail is on, so a rotation's notice is queued; nothing delivers it (no interval, no server).
    t = await startOAuthApp(database, { env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_DELIVERY_INTERVAL: '0' } });
  });
  after(() => t.close());

  const whileInsertsFail = <T>(table: string, work: () => Promise<T>) => failingInserts(t.deps.database.db, database, table, work);

  /** A member with a verified address (so a rotation mails a notice) and a confidential app, with its first secret. */
  async function developerWithApp(): Promise<{ visitor: Visitor; userId: number; clientId: string; secret: string }> {
    const { user, visitor } = await signedInMember(t, unique('dev'), PASSWORD);
    const address = `${user.username}@example.test`;
    await t.deps.stores.memberEmails.set(user.id, address, 'en', t.clock.now());
    assert.ok(await t.deps.stores.memberEmails.markVerified(user.id, address, t.clock.now()));
    const created = await visitor.post('/settings/developers', {
      name: 'Kept App', description: '', homepage: 'https://kept.example', redirect_uris: 'https://kept.example/cb', type: 'confidential',
    });
    assert.equal(created.status, 303);
    const secret = readOnlyField((await visitor.get(created.location!)).text, 'client-secret');
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    assert.ok(client && secret);
    return { visitor, userId: user.id, clientId: client.clientId, secret };
  }

  const storedSecretHash = async (clientId: string) => (await t.deps.stores.clients.findById(clientId))?.secretHash;
  const rotate = (visitor: Visitor, clientId: string) => visitor.post(`/settings/developers/${clientId}/rotate-secret`, { confirm: 'yes' });

  for (const [table, what] of [['security_events', 'security-log line'], ['one_time_secrets', 'sealed copy for the page that shows it']] as const) {
    test(`a rotation whose ${what} cannot be written changes nothing: the app keeps the secret its owner holds`, async () => {
      const { visitor, userId, clientId, secret } = await developerWithApp();
      const refused = await whileInsertsFail(table, () => rotate(visitor, clientId));
      assert.ok(refused.status >= 500, `an error is answered (${refused.status})`);
      assert.equal(await storedSecretHash(clientId), hashSecret(secret), 'the secret the owner was shown is still the app\'s');
      assert.equal((await t.deps.stores.clients.findById(clientId))?.previousSecret, null, 'and no rotation put it aside');
      const logged = (await t.deps.stores.securityEvents.listForUser(userId, 0, 10)).items.filter((e) => e.kind === 'client_secret.rotated');
      assert.deepEqual(logged, [], 'the log tells of no rotation');
    });
  }

  test('a rotation whose notice mail cannot be queued still shows the new secret, which is the app\'s', async () => {
    const { visitor, userId, clientId, secret: old } = await developerWithApp();
    const rotated = await whileInsertsFail('mail_outbox', () => rotate(visitor, clientId));
    assert.equal(rotated.status, 303, 'the redirect to the page that shows it');
    const shown = readOnlyField((await visitor.get(rotated.location!)).text, 'client-secret');
    assert.ok(shown && shown !== old, 'the page shows a new secret');
    assert.equal(await storedSecretHash(clientId), hashSecret(shown), 'the one shown is the app\'s');
    const logged = (await t.deps.stores.securityEvents.listForUser(userId, 0, 10)).items.filter((e) => e.kind === 'client_secret.rotated');
    assert.equal(logged.length, 1, 'the log tells of it');
  });

  test('a personal token whose security-log line cannot be written is not made', async () => {
    const { user, visitor } = await signedInMember(t, unique('tok'), PASSWORD);
    const refused = await whileInsertsFail('security_events',
      () => visitor.post('/settings/tokens', { name: 'lost', scopes: ['profile:read'], expires_in_days: '30', password: PASSWORD }));
    assert.ok(refused.status >= 500, `an error is answered (${refused.status})`);
    assert.deepEqual(await t.deps.stores.personalTokens.listForUser(user.id), [], 'no token exists that no one was shown');
  });

  test('a registration whose secret cannot be carried to its page registers no app', async () => {
    const { user, visitor } = await signedInMember(t, unique('reg'), PASSWORD);
    const refused = await whileInsertsFail('one_time_secrets', () => visitor.post('/settings/developers', {
      name: 'Lost App', description: '', homepage: 'https://lost.example', redirect_uris: 'https://lost.example/cb', type: 'confidential',
    }));
    assert.ok(refused.status >= 500, `an error is answered (${refused.status})`);
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), [], 'no app has a secret no one was shown');
  });
});
