/**
 * attack127: a homepage saved before attack122's rule (an app's homepage writes its host as a
 * browser reads it) is still in the database; the pages that show it must show where its link goes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Browser, authorizeQuery, newClient, pkcePair, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';

/** "community" with a Cyrillic о (U+043E): reads as the site, goes to xn--cmmunity-…. */
const LOOKALIKE = 'https://c\u043emmunity.example/';
const AS_READ = new URL(LOOKALIKE).href;

forEachDatabase('attack127 stored homepage', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  // attack122 refused such a homepage from then on, but the rows saved before kept it: the consent
  // page still read "made by … · https://cоmmunity.example/" beside a link to xn--cmmunity-…, and the
  // signed-out page and the member's pages alike.
  test('a homepage saved before the host rule is shown as a browser reads it, on every page that shows it', async () => {
    const { browser, user } = await signedInBrowser(t);
    const c = await newClient(t, { ownerId: user.id });
    // As a row written before the rule: straight to the store, past the checks.
    assert.ok(await t.deps.stores.clients.setDetails(c.client.clientId, { name: 'Old App', description: '', homepageUrl: LOOKALIKE }, t.deps.clock.now(), 'operator'));
    assert.ok(AS_READ.startsWith('https://xn--'));

    const pages = {
      consent: await browser.fetch(`/oauth/authorize?${authorizeQuery(c, { pkce: pkcePair() })}`),
      signedOut: await new Browser(t).fetch(`/oauth/logout?client_id=${encodeURIComponent(c.client.clientId)}`),
      developer: await browser.fetch(`/settings/developers/${encodeURIComponent(c.client.clientId)}`),
    };
    for (const [name, response] of Object.entries(pages)) {
      assert.equal(response.status, 200, `${name} renders`);
      const page = await response.text();
      assert.ok(!page.includes('c\u043emmunity'), `${name} does not show the look-alike host`);
      assert.ok(page.includes(`href="${AS_READ}" rel="noopener noreferrer">${AS_READ}</a>`), `${name} shows the address its link goes to`);
    }
  });
});
