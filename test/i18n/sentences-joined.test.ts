/**
 * Two catalog sentences set in one paragraph take a space after an English full stop and none
 * after a Chinese one (。！？), over real HTTP in each language: a line break between them in the
 * template is a space too, as Chromium renders it ("…登录。 你当前…"). Nor does a space stand
 * before a full-width bracket ("描述（可选）").
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

  /** The text of the `<label for="id">`, its tags dropped and its white space as HTML keeps it. */
  function labelText(page: string, id: string): string {
    const found = new RegExp(`<label for="${id}">([^]*?)</label>`).exec(page);
    assert.ok(found, `a label for ${id}`);
    return found[1]!.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim();
  }

  test('a scope on the tokens page joins what it allows and what it does not with a space in English and none after a Chinese full stop', async () => {
    const { visitor } = await signedInMember(t, `scoped${randomBytes(4).toString('hex')}`, PASSWORD);
    const expected: Record<string, string> = {
      en: 'profile:read Nickname, avatar, bio, membership status, level and experience points. Not: Your e-mail address and account status.',
      'zh-CN': 'profile:read 昵称、头像、个人简介、会员身份、等级和经验值。不包括：你的邮箱地址和账号状态。',
      'zh-TW': 'profile:read 暱稱、大頭貼、自我介紹、會員身分、等級和經驗值。不包括：你的電子郵件地址和帳號狀態。',
    };
    for (const [locale, label] of Object.entries(expected)) {
      visitor.cookies.set('lang', locale);
      const page = await visitor.get('/settings/tokens');
      assert.equal(page.status, 200, locale);
      assert.equal(labelText(page.text, 'scope-profile-read'), label, locale);
    }
  });

  test('the optional mark after a field of the app registration form takes a space in English and none before a Chinese full-width bracket', async () => {
    const { visitor } = await signedInMember(t, `optional${randomBytes(4).toString('hex')}`, PASSWORD);
    const expected: Record<string, string> = { en: 'Description (optional)', 'zh-CN': '描述（可选）', 'zh-TW': '說明（選填）' };
    for (const [locale, label] of Object.entries(expected)) {
      visitor.cookies.set('lang', locale);
      const page = await visitor.get('/settings/developers');
      assert.equal(page.status, 200, locale);
      assert.equal(labelText(page.text, 'description'), label, locale);
    }
  });
});
