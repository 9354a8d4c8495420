/**
 * Two catalog sentences set in one paragraph take a space after an English full stop and none
 * after a Chinese one (。！？), over real HTTP in each language: a line break between them in the
 * template is a space too, as Chromium renders it ("…登录。 你当前…").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { writePost } from '../../src/core/community/posts.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';

const PASSWORD = 'correct horse battery staple';

/** The paragraph's text, its tags dropped and its white space as HTML keeps it (any run is one space). */
function paragraphWith(page: string, words: string): string {
  const found = [...page.matchAll(/<p>([^]*?)<\/p>/g)].map((m) => m[1]!.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim()).find((p) => p.includes(words));
  assert.ok(found, `a paragraph with ${words}`);
  return found;
}

forEachDatabase('sentences joined on a page', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('the sign-out question and the question before deleting a post join their sentences with a space in English and none after a Chinese full stop', async () => {
    const { user, visitor } = await signedInMember(t, `joined${randomBytes(4).toString('hex')}`, PASSWORD);
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'To go', body: 'Words.', category: 'General', status: 'draft' });
    const expected: Record<string, [string, string]> = {
      en: [`An application asked to sign you out of Community. You are signed in as ${user.username}.`, 'This draft will be gone for good. This cannot be undone.'],
      'zh-CN': [`有一个应用请求让你退出社区的登录。你当前登录的账号是 ${user.username}。`, '这篇草稿将被永久删除。此操作无法撤销。'],
      'zh-TW': [`有一個應用程式要求將你登出社群。你目前登入的帳號是 ${user.username}。`, '這篇草稿將被永久刪除。此動作無法復原。'],
    };
    for (const [locale, [signOut, deletion]] of Object.entries(expected)) {
      visitor.cookies.set('lang', locale);
      const asked = await visitor.get('/oauth/logout');
      assert.equal(asked.status, 200, locale);
      assert.equal(paragraphWith(asked.text, user.username), signOut, locale);
      const question = await visitor.get(`/posts/${post.id}/delete`);
      assert.equal(question.status, 200, locale);
      assert.equal(paragraphWith(question.text, deletion.slice(0, 6)), deletion, locale);
    }
  });
});
