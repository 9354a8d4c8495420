/**
 * The developer page's list of a member's apps and its register form, over real HTTP on every
 * database: deactivated apps are kept (their row holds the audit trail and keeps their tokens
 * refused) but listed apart, collapsed, so the list a developer works with holds the live ones;
 * and the form's hint reads as one text in each language.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { deactivateClient, registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

forEachDatabase('the developer page\'s list and form', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const member = () => signedInMember(t, `devlist${++counter}${randomBytes(3).toString('hex')}`, PASSWORD);

  test('deactivated apps are listed apart from the active ones, collapsed, saying they are deactivated; the active list holds only active apps', async () => {
    const { user, visitor } = await member();
    const app = async (name: string) => (await registerClient(t.deps.stores, t.clock, {
      name, type: 'public', redirectUris: ['https://list.example/cb'], ownerId: user.id, memberRegistered: true,
    })).client;
    await app('Live One');
    const gone = await app('Gone One');
    await app('Live Two');
    await deactivateClient(t.deps.stores, t.clock, gone.clientId);

    const page = (await visitor.get('/settings/developers')).text;
    const [listed = '', apart = ''] = page.split('<details class="deactivated-apps">');
    assert.ok(listed.includes('Live One') && listed.includes('Live Two'), 'the active apps are in the list');
    assert.ok(!listed.includes('Gone One'), 'the deactivated app is not among them');
    const collapsed = apart.slice(0, apart.indexOf('</details>'));
    assert.match(collapsed, /^<summary>Deactivated applications \(1\)<\/summary>/, 'collapsed under a summary that counts them');
    assert.ok(collapsed.includes(`href="/settings/developers/${gone.clientId}"`) && collapsed.includes('Gone One'), 'the deactivated app is there, still reachable');

    // With every app deactivated, the page says there is no active one, and keeps them apart.
    const { user: other, visitor: otherVisitor } = await member();
    const only = (await registerClient(t.deps.stores, t.clock, { name: 'Only One', type: 'public', redirectUris: ['https://list.example/cb'], ownerId: other.id, memberRegistered: true })).client;
    await deactivateClient(t.deps.stores, t.clock, only.clientId);
    const [otherListed = '', otherApart = ''] = (await otherVisitor.get('/settings/developers')).text.split('<details class="deactivated-apps">');
    assert.ok(otherListed.includes('You have no active applications.'), 'no active app, said so');
    assert.ok(!otherListed.includes('Only One') && otherApart.includes('Only One'));
  });

  test('the register form\'s redirect URI hint is one text in each language: a space after an English full stop, none after a Chinese one', async () => {
    const { visitor } = await member();
    const hints: Record<string, string> = {
      en: 'One per line. https, or http on 127.0.0.1, [::1] or localhost; no #fragment. Matched exactly.',
      'zh-CN': '每行一个。使用 https，或在 127.0.0.1、[::1]、localhost 上使用 http；不能带 #片段。须完全一致才匹配。',
      'zh-TW': '每行一個。使用 https，或在 127.0.0.1、[::1]、localhost 上使用 http；不能帶 #片段。須完全一致才相符。',
    };
    for (const [locale, hint] of Object.entries(hints)) {
      const page = (await visitor.request('/settings/developers', { headers: { 'accept-language': locale } })).text;
      assert.match(page, new RegExp(`<html lang="${locale}"`));
      assert.equal(/<p class="hint" id="redirect-hint">([^<]*)<\/p>/.exec(page)?.[1], hint, locale);
    }
  });
});
