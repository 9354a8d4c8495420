/**
 * attack111: a member reading the site in Chinese who revokes a token a second time (a second tab,
 * a double tap on a phone) or opens an app that is not theirs is told why in Chinese, not only in
 * an English line under "开发者参考信息".
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';

const PASSWORD = 'correct horse battery staple';

forEachDatabase('attack111: refusals of the settings in the reader\'s language', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  /** The page's own words: its main text without the developer's reference line. */
  const memberWords = (text: string) => (/<main[\s\S]*<\/main>/.exec(text)?.[0] ?? '').replace(/<details>[\s\S]*?<\/details>/g, '');

  test('a token revoked already, and an app of no one\'s or another\'s, are refused in the reader\'s language', async () => {
    const { user, visitor } = await signedInMember(t, `refused${++counter}`, PASSWORD);
    visitor.cookies.set('lang', 'zh-CN');
    const { record } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'nightly', scopes: ['profile:read'], expiresInDays: 30 });
    assert.equal((await visitor.post('/settings/tokens/revoke', { token_id: String(record.id), confirm: 'yes' })).status, 303);
    const again = await visitor.post('/settings/tokens/revoke', { token_id: String(record.id), confirm: 'yes' });
    assert.equal(again.status, 404);
    assert.match(memberWords(again.text), /令牌，它可能已经被撤销了/);
    const app = await visitor.get('/settings/developers/no-such-app');
    assert.equal(app.status, 404);
    assert.match(memberWords(app.text), /你名下没有这个客户端 ID 的应用/);
  });
});
