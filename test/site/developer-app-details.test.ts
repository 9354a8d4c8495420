/**
 * An app's name, description and homepage, changed by its owner on the developer page
 * (`POST /settings/developers/:clientId/details`), by registration's rules, over real HTTP on
 * every database: what the consent page shows changes with them, and a staff verification, which
 * vouched for the details staff saw, ends when any of them changes (attack87, attack89).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import type { Client } from '../../src/core/oauth/ports.js';
import { Browser, authorizeQuery, newUser, pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://details.example/cb';
const DETAILS = { name: 'Details App', description: 'Reads your posts.', homepage: 'https://details.example/' };

forEachDatabase('an app\'s details on the developer page', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  /** A member signed in just now, and an app of theirs with `DETAILS`. */
  async function ownerAndApp() {
    const { user, visitor } = await signedInMember(t, `details${++counter}`, PASSWORD);
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: DETAILS.name, description: DETAILS.description, homepageUrl: DETAILS.homepage, type: 'public', redirectUris: [REDIRECT_URI], ownerId: user.id, memberRegistered: true,
    });
    return { user, visitor, client, page: `/settings/developers/${client.clientId}` };
  }

  /** The consent page another member sees for `client`. */
  async function consentPage(client: Client): Promise<string> {
    const browser = new Browser(t);
    assert.equal((await browser.signIn((await newUser(t)).username)).status, 303);
    return (await browser.fetch(`/oauth/authorize?${authorizeQuery({ client, redirectUri: REDIRECT_URI }, { pkce: pkcePair() })}`)).text();
  }

  const stored = async (clientId: string) => (await t.deps.stores.clients.findById(clientId))!;

  test('the owner changes the app\'s name, description and homepage: the developer page and the consent page show them, and the security log says so', async () => {
    const { user, visitor, client, page } = await ownerAndApp();
    assert.match((await visitor.get(page)).text, /<form method="post" action="\/settings\/developers\/[0-9a-f]+\/details">/);
    const changed = { name: 'Renamed App', description: 'Now reads your profile too.', homepage: 'https://renamed.example/home' };
    const saved = await visitor.post(`${page}/details`, changed);
    assert.equal(saved.status, 303);
    assert.equal(saved.location, `${page}?notice=details`);
    const after = await stored(client.clientId);
    assert.deepEqual([after.name, after.description, after.homepageUrl], [changed.name, changed.description, changed.homepage]);
    const shown = (await visitor.get(saved.location!)).text;
    assert.match(shown, /Application details saved\./);
    assert.match(shown, /<h1>Renamed App<\/h1>/);
    assert.match(shown, /value="https:\/\/renamed\.example\/home"/);
    const consent = await consentPage(after);
    for (const words of [changed.name, changed.description, changed.homepage]) assert.ok(consent.includes(words), words);
    assert.ok(!consent.includes(DETAILS.name) && !consent.includes(`href="${DETAILS.homepage}"`), 'the old name and homepage are gone');
    const [event] = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 1)).items;
    assert.deepEqual([event?.kind, event?.detail], ['client.details_changed', { app: changed.name, client_id: client.clientId }]);
    assert.deepEqual(t.audit.filter((e) => 'clientId' in e && e.clientId === client.clientId).map((e) => e.audit), ['client.details_changed']);
    // The description and homepage may be emptied; the name may not.
    assert.equal((await visitor.post(`${page}/details`, { name: 'Renamed App', description: '', homepage: '' })).status, 303);
    const emptied = await stored(client.clientId);
    assert.deepEqual([emptied.description, emptied.homepageUrl], ['', '']);
  });

  test('details registration would refuse are refused with 400, the form keeping what was sent beside each problem, and nothing is stored', async () => {
    const { visitor, client, page } = await ownerAndApp();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ homepage: 'http://' }, /Homepage: Enter an http or https address/],
      [{ homepage: 'javascript:alert(1)' }, /Homepage: Enter an http or https address/],
      // A user name before an @ reads as the host on the consent page (attack92).
      [{ homepage: 'https://community.example%2Flogin@evil.example/' }, /Homepage: .*contains credentials \(a user name or password\)/],
      [{ homepage: 'https://user:secret@evil.example/' }, /Homepage: .*contains credentials/],
      [{ homepage: 'https://evil.example/\u202eelpmaxe.knab//:sptth' }, /Homepage: Remove the control or invisible characters/],
      [{ name: '' }, /Name: Use 1 to 80 characters/],
      [{ name: 'Pay\u200bPal' }, /Name: Remove the control or invisible characters/],
      [{ description: 'd'.repeat(501) }, /Description: At most 500 characters/],
    ];
    for (const [fields, message] of cases) {
      const sent = { ...DETAILS, name: 'Kept Typing', ...fields };
      const response = await visitor.post(`${page}/details`, sent);
      assert.equal(response.status, 400, String(message));
      assert.match(response.text, message);
      assert.match(response.text, /aria-invalid="true"/);
      if (fields.homepage !== undefined) assert.ok(response.text.includes(`id="homepage" name="homepage" value="${fields.homepage.replace(/&/g, '&amp;')}"`), 'the homepage as sent');
      if (fields.name === undefined) assert.match(response.text, /id="name" name="name" value="Kept Typing"/, 'the name as sent');
    }
    // Every problem at once, as registration names them.
    const all = await visitor.post(`${page}/details`, { name: '', description: 'd'.repeat(501), homepage: 'javascript:alert(1)' });
    assert.equal(all.status, 400);
    for (const message of [/Name: Use 1 to 80 characters/, /Description: At most 500 characters/, /Homepage: Enter an http or https address/]) assert.match(all.text, message);
    assert.deepEqual(await stored(client.clientId), client, 'nothing changed');
  });

  test('an app\'s description, shown on the consent page above its buttons, has at most 4 combining marks on one character, as its name has', async () => {
    const { visitor, client, page } = await ownerAndApp();
    for (const description of ['Z' + '\u0316'.repeat(75), 'Reads Z' + '\u0301'.repeat(5)]) {
      const response = await visitor.post(`${page}/details`, { ...DETAILS, description });
      assert.equal(response.status, 400, description);
      assert.match(response.text, /Description: Use at most 4 accents or other marks on one letter/);
    }
    assert.deepEqual(await stored(client.clientId), client, 'nothing changed');
    const vietnamese = 'Ghi ch\u00e9p ti\u1ebfng Vi\u1ec7t, Z' + '\u0301'.repeat(4);
    assert.equal((await visitor.post(`${page}/details`, { ...DETAILS, description: vietnamese })).status, 303);
    assert.equal((await stored(client.clientId)).description, vietnamese);
  });

  test('another member\'s app, or one that does not exist, is a 404 and changes nothing', async () => {
    const { visitor, client, page } = await ownerAndApp();
    const { visitor: stranger } = await signedInMember(t, `details${++counter}`, PASSWORD);
    for (const path of [page, '/settings/developers/no-such-app']) {
      const response = await stranger.post(`${path}/details`, { ...DETAILS, name: 'Taken Over' });
      assert.equal(response.status, 404, path);
      assert.match(response.text, /You have no application with that client ID/, path);
    }
    assert.deepEqual(await stored(client.clientId), client);
    assert.equal((await visitor.post(`${page}/details`, { ...DETAILS, name: 'Still Mine' })).status, 303, 'its owner may');
  });

  test('a deactivated app\'s details cannot be changed', async () => {
    const { visitor, client, page } = await ownerAndApp();
    assert.equal((await visitor.post(`${page}/deactivate`, { confirm: 'yes' })).status, 303);
    assert.doesNotMatch((await visitor.get(page)).text, /\/details"/, 'its page offers no form');
    const refused = await visitor.post(`${page}/details`, { ...DETAILS, name: 'Revived' });
    assert.equal(refused.status, 400);
    assert.equal((await stored(client.clientId)).name, DETAILS.name);
  });

  test('a verified app loses its "Verified by" mark when its owner changes its name, description or homepage, and keeps it when the same ones are saved again', async () => {
    for (const change of [{ name: 'Details App Deluxe' }, { description: 'Official: sign in on the next page.' }, { homepage: 'https://official.example/' }]) {
      const what = Object.keys(change)[0]!;
      const { visitor, client, page } = await ownerAndApp();
      await t.deps.stores.clients.setVerified(client.clientId, { verified: true, reviewed: client }, t.clock.now());
      assert.match((await visitor.get(page)).text, /Saving another name, description or homepage, or other redirect URIs or sign-out addresses, ends the verification/, what);
      assert.equal((await visitor.post(`${page}/details`, DETAILS)).status, 303, what);
      assert.notEqual((await stored(client.clientId)).verifiedAt, null, `${what}: the same details saved again`);
      assert.match(await consentPage(await stored(client.clientId)), /Verified by Community/, what);
      assert.equal((await visitor.post(`${page}/details`, { ...DETAILS, ...change })).status, 303, what);
      const after = await stored(client.clientId);
      assert.equal(after.verifiedAt, null, `${what}: another one`);
      assert.doesNotMatch(await consentPage(after), /Verified by/, what);
    }
  });
});
