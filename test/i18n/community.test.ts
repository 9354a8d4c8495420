/**
 * The community pages in Chinese, and the names on them (INTERFACE section 12), over real HTTP on
 * each database: no English sentence is left in zh-CN or zh-TW, and two members whose nicknames
 * are the same are told apart by their @username wherever a page names them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { updateProfile } from '../../src/core/accounts/accounts.js';
import { commentOnPost, writePost } from '../../src/core/community/posts.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor, signedInMember } from '../site/visitor.js';
import { englishSentences } from './untranslated.js';

const PASSWORD = 'correct horse battery staple';

/** What a Chinese page may show in Latin letters: the site's name and the formats a hint names. */
const PROPER_NOUNS = ['Community', 'Markdown', 'HTML', 'UTC'];

forEachDatabase('the community pages in Chinese and the names on them', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  /** A member with a nickname, signed in, with one published post. */
  async function writer(username: string, nickname: string) {
    const { user, visitor } = await signedInMember(t, `${username}${++counter}`, PASSWORD);
    await updateProfile(t.deps.stores, t.clock, user.id, { nickname });
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: `${nickname}的帖子 ${counter}`, body: '今天天气很好。', category: '日常', status: 'published' });
    return { user, visitor, post };
  }

  /** Every place `page` names `username`: each link to the profile, with what it shows. */
  function namesOf(page: string, username: string): string[] {
    return [...page.matchAll(new RegExp(`<a href="/u/${username}">([\\s\\S]*?)</a>`, 'g'))].map((m) => m[1]!);
  }
  const shownAs = (username: string) => `<bdi class="nickname">林小伟</bdi> <span class="handle">@${username}</span>`;

  test('two members with the same nickname are told apart by their @username on the home page, the post page and the profile page', async () => {
    const real = await writer('linxw', '林小伟');
    const impostor = await writer('impostor', '林小伟');
    await commentOnPost(t.deps.stores, t.clock, real.post.id, impostor.user.id, '我也是林小伟。');
    const [linxw, fake] = [real.user.username, impostor.user.username];
    const reader = new Visitor(t.baseUrl);

    const home = (await reader.get('/')).text;
    assert.deepEqual(namesOf(home, linxw), [shownAs(linxw)]);
    assert.deepEqual(namesOf(home, fake), [shownAs(fake)]);

    const postPage = (await reader.get(`/posts/${real.post.id}`)).text;
    assert.deepEqual(namesOf(postPage, linxw), [shownAs(linxw)], 'the author');
    assert.deepEqual(namesOf(postPage, fake), [shownAs(fake)], 'the commenter');

    for (const username of [linxw, fake]) {
      const profile = (await reader.get(`/u/${username}`)).text;
      assert.match(profile, new RegExp(`<h1><bdi>林小伟</bdi></h1>\\s*<p class="handle">@${username}</p>`), username);
      assert.match(profile, new RegExp(`<title>林小伟 \\(@${username}\\)`), username);
    }
  });

  test('a profile\'s title isolates a nickname with right-to-left letters from the @username, and leaves other nicknames bare', async () => {
    const { user } = await writer('shalom', 'שלום 12');
    const profile = (await new Visitor(t.baseUrl).get(`/u/${user.username}`)).text;
    assert.match(profile, new RegExp(`<title>\u2068שלום 12\u2069 \\(@${user.username}\\)`), 'the digits stay with the name, not with the @username');
    const { user: chinese } = await writer('wangxm', '王小明');
    assert.match((await new Visitor(t.baseUrl).get(`/u/${chinese.username}`)).text, new RegExp(`<title>王小明 \\(@${chinese.username}\\)`));
  });

  test('every community page in zh-CN and zh-TW has no English sentence, and its heading is translated', async () => {
    const { user, visitor, post } = await writer('wenzhang', '王小明');
    await commentOnPost(t.deps.stores, t.clock, post.id, user.id, '第一条评论。');
    await t.deps.stores.posts.like(post.id, user.id, t.clock.now());
    const draft = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: '草稿', body: '还没写完。', category: '日常', status: 'draft' });
    const headings: Record<'zh-CN' | 'zh-TW', Record<string, string>> = {
      'zh-CN': {
        '/': '最新帖子', [`/u/${user.username}`]: '<bdi>王小明</bdi>', [`/posts/${post.id}`]: post.title, [`/posts/${draft.id}`]: draft.title,
        '/posts/new': '发帖', [`/posts/${post.id}/edit`]: '编辑帖子', [`/posts/${post.id}/delete`]: `删除“${post.title}”？`, '/docs': '开发者文档', '/docs/api': 'API 参考',
      },
      'zh-TW': {
        '/': '最新文章', [`/u/${user.username}`]: '<bdi>王小明</bdi>', [`/posts/${post.id}`]: post.title, [`/posts/${draft.id}`]: draft.title,
        '/posts/new': '發表文章', [`/posts/${post.id}/edit`]: '編輯文章', [`/posts/${post.id}/delete`]: `刪除「${post.title}」？`, '/docs': '開發者文件', '/docs/api': 'API 參考',
      },
    };
    const anonymous = new Visitor(t.baseUrl);
    for (const locale of ['zh-CN', 'zh-TW'] as const) {
      visitor.cookies.set('lang', locale);
      for (const [path, heading] of Object.entries(headings[locale])) {
        const page = await visitor.get(path);
        assert.equal(page.status, 200, path);
        assert.equal(/<h1>([\s\S]*?)<\/h1>/.exec(page.text)?.[1], heading, `${locale} ${path}`);
        // The documentation's body may stay English (INTERFACE section 12): its navigation may not.
        const checked = path === '/docs'
          ? page.text.replace(/<div lang="en">[\s\S]*?<\/div>\s*(?=<div class="docs-body">)/, '').replace(/(<\/nav>\s*)<div lang="en" class="docs-content">[\s\S]*<\/article>/, '$1</article>')
          : page.text;
        assert.deepEqual(englishSentences(checked, PROPER_NOUNS), [], `${locale} ${path}`);
      }
      for (const path of ['/', `/u/${user.username}`, `/posts/${post.id}`]) {
        const page = await anonymous.request(path, { headers: { 'accept-language': locale } });
        assert.deepEqual(englishSentences(page.text, PROPER_NOUNS), [], `${locale} ${path}, signed out`);
      }
      const refused = await visitor.post('/posts/new', { title: '', category: '日常', body: '正文', status: 'published' });
      assert.equal(refused.status, 400);
      assert.deepEqual(englishSentences(refused.text, PROPER_NOUNS), [], `${locale}: the editor's problem`);
      const comment = await visitor.post(`/posts/${post.id}/comments`, { comment: ' ' });
      assert.equal(comment.status, 400);
      assert.deepEqual(englishSentences(comment.text, PROPER_NOUNS), [], `${locale}: the comment's problem`);
    }
  });
});
