/**
 * An app's name in the notice mail that tells a member they allowed it: isolated (FSI … PDI,
 * UAX #9) when it is right to left or holds a direction control an older row may keep, so it
 * cannot reorder the subject's or the sentence's words around it. Over real HTTP on every database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { obtainCode, pkcePair, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';

forEachDatabase('app names in notice mail', (database) => {
  let t: TestApp;
  before(async () => {
    // Mail is on, so the notice is queued; nothing delivers it (no interval, no server).
    t = await startOAuthApp(database, { env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_DELIVERY_INTERVAL: '0' } });
  });
  after(() => t.close());

  test('the mail that tells a member they allowed an app isolates a right-to-left name in its subject and body', async () => {
    const { browser, user } = await signedInBrowser(t);
    const address = `${user.username}@example.test`;
    await t.deps.stores.memberEmails.set(user.id, address, 'en', t.clock.now());
    assert.ok(await t.deps.stores.memberEmails.markVerified(user.id, address, t.clock.now()));
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'تطبيق الوكيل', type: 'public', redirectUris: ['https://agent.example/cb'] });
    await obtainCode(browser, { client, redirectUri: 'https://agent.example/cb' }, { pkce: pkcePair() });
    const mails = await t.deps.database.db.selectFrom('mail_outbox').select(['subject', 'body_text']).where('recipient', '=', address).execute();
    assert.equal(mails.length, 1, 'one notice');
    assert.ok(mails[0]!.subject.startsWith('\u2068تطبيق الوكيل\u2069 can now use'), JSON.stringify(mails[0]!.subject));
    assert.ok(mails[0]!.body_text.includes('“\u2068تطبيق الوكيل\u2069”'), 'the body isolates it too');
  });
});
