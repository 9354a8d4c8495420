/**
 * Posts after they are written (issue 18 item 9): authors publish drafts, edit and delete their
 * own posts, and the API lists what is published with an excerpt made again on every edit. The
 * demo's counts are its rows. Over real HTTP, on every database.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { layOut } from '../../src/core/community/markdown.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import type { User } from '../../src/core/accounts/ports.js';
import { commentOnPost, excerpt, writePost } from '../../src/core/community/posts.js';
import { formatLocalTimestamp } from '../../src/core/time.js';
import { DEMO_POSTS, DEMO_USERNAME, seedDemo } from '../../src/demo.js';
import { POST_FORM_BODY_LIMIT_BYTES } from '../../src/http/routes/community.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

interface ApiPost { id: number; title: string; excerpt: string; categoryName: string; createdAt: string; likeCount: number; commentCount: number }
interface ApiPage { items: ApiPost[]; totalElements: number }

forEachDatabase('posts after writing', (database) => {
  let t: TestApp;
  let counter = 0;

  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  /** A new account, a browser signed in as it, and a personal token that reads its posts. */
  async function author(): Promise<{ user: User; visitor: Visitor; token: string }> {
    counter += 1;
    const user = await createAccount(t.deps.stores, t.clock, { username: `writer${counter}`, password: PASSWORD });
    const visitor = new Visitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'reader', scopes: ['posts:read'], expiresInDays: 30 });
    return { user, visitor, token };
  }

  async function apiPosts(token: string): Promise<ApiPage> {
    const response = await fetch(`${t.baseUrl}/api/open/v1/me/posts`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    return await response.json() as ApiPage;
  }

  /** Writes a post through the form; returns its id. */
  async function writeThroughForm(visitor: Visitor, fields: { title: string; body: string; status: 'published' | 'draft' }): Promise<number> {
    const response = await visitor.post('/posts/new', { category: 'Notes', ...fields });
    assert.equal(response.status, 303);
    return Number(/^\/posts\/(\d+)$/.exec(response.location ?? '')![1]);
  }

  test('publishing a draft lists it in the API with its excerpt, as the newest post, dated when it was published', async () => {
    const { visitor, token } = await author();
    const body = 'A draft that **waits** for its day.\n\nSecond paragraph.';
    const draftId = await writeThroughForm(visitor, { title: 'Waiting', body, status: 'draft' });
    t.clock.advance(60_000);
    await writeThroughForm(visitor, { title: 'Written later', body: 'Out already.', status: 'published' });
    assert.deepEqual((await apiPosts(token)).items.map((p) => p.title), ['Written later'], 'a draft is not listed');

    const page = await visitor.get(`/posts/${draftId}`);
    assert.match(page.text, new RegExp(`<form method="post" action="/posts/${draftId}/publish"`), 'the draft offers to publish it');
    t.clock.advance(60_000);
    const published = await visitor.post(`/posts/${draftId}/publish`, {});
    assert.equal(published.status, 303);
    assert.equal(published.location, `/posts/${draftId}`);

    const listed = await apiPosts(token);
    assert.equal(listed.totalElements, 2);
    assert.deepEqual(listed.items.map((p) => p.id)[0], draftId, 'newest first: the post is as new as its publication');
    assert.equal(listed.items[0]!.excerpt, excerpt(body));
    assert.equal(listed.items[0]!.excerpt, 'A draft that waits for its day. Second paragraph.');
    assert.equal(listed.items[0]!.createdAt, formatLocalTimestamp(t.clock.now()));
    assert.equal((await new Visitor(t.baseUrl).get(`/posts/${draftId}`)).status, 200, 'public now');
    assert.equal((await visitor.post(`/posts/${draftId}/publish`, {})).status, 303, 'a second press changes nothing');
    assert.equal((await apiPosts(token)).items[0]!.createdAt, formatLocalTimestamp(t.clock.now()));
  });

  test('"Publish" on the edit form of a draft publishes it; saving a published post keeps it published', async () => {
    const { visitor, token } = await author();
    const id = await writeThroughForm(visitor, { title: 'Draft', body: 'Not yet.', status: 'draft' });
    const kept = await visitor.post(`/posts/${id}/edit`, { title: 'Still a draft', category: 'Notes', body: 'Not yet.', status: 'draft' });
    assert.equal(kept.status, 303);
    assert.equal((await apiPosts(token)).totalElements, 0, 'saved as a draft, still unlisted');
    await visitor.post(`/posts/${id}/edit`, { title: 'Out now', category: 'Notes', body: 'Ready.', status: 'published' });
    assert.deepEqual((await apiPosts(token)).items.map((p) => [p.id, p.title, p.excerpt]), [[id, 'Out now', 'Ready.']]);
    const form = await visitor.get(`/posts/${id}/edit`);
    assert.match(form.text, /Save changes/);
    assert.doesNotMatch(form.text, /value="draft"/, 'a published post offers no way back to a draft');
    await visitor.post(`/posts/${id}/edit`, { title: 'Out now', category: 'Notes', body: 'Ready.', status: 'draft' });
    assert.equal((await apiPosts(token)).totalElements, 1, 'an edit never unpublishes');
  });

  test('a title, category or body that no reader can see is refused, when writing and when editing', async () => {
    const { visitor } = await author();
    const id = await writeThroughForm(visitor, { title: 'Seen', body: 'Seen.', status: 'published' });
    // Zero-width space, Hangul filler, blank Braille cell, a lone combining mark.
    for (const blank of ['\u200b', '\u3164\u3164', '\u2800', '\u0301']) {
      const written = await visitor.post('/posts/new', { title: blank, category: 'Notes', body: blank, status: 'published' });
      assert.equal(written.status, 400, JSON.stringify(blank));
      assert.match(written.text, /Title: Use at least one character a reader can see\./);
      assert.match(written.text, /Text: Use at least one character a reader can see\./);
      const edited = await visitor.post(`/posts/${id}/edit`, { title: blank, category: 'Notes', body: 'Seen.', status: 'published' });
      assert.equal(edited.status, 400, JSON.stringify(blank));
      assert.match(edited.text, /Title: Use at least one character a reader can see\./);
    }
    assert.equal((await t.deps.stores.posts.findById(id))?.title, 'Seen');
  });

  test('editing a post makes its HTML and excerpt again, and hostile Markdown stays inert', async () => {
    const { visitor, token } = await author();
    const id = await writeThroughForm(visitor, { title: 'Before', body: 'The first version.', status: 'published' });
    const form = await visitor.get(`/posts/${id}/edit`);
    assert.equal(form.status, 200);
    assert.match(form.text, /<textarea[^>]*name="body"[^>]*>The first version\.<\/textarea>/);

    t.clock.advance(60_000);
    const hostile = [
      '**Now** with <script>alert(1)</script> and <img src=x onerror=alert(2)>.',
      '',
      '[click](javascript:alert(3)) [data](data:text/html;base64,PHNjcmlwdD4=) <a href="https://evil.example">raw</a>',
      '',
      '```',
      '</code></pre><script>alert(4)</script>',
      '```',
    ].join('\n');
    const edited = await visitor.post(`/posts/${id}/edit`, { title: 'After <b>', category: 'Edited', body: hostile, status: 'published' });
    assert.equal(edited.status, 303);

    const stored = await t.deps.stores.posts.findById(id);
    assert.equal(stored?.bodyHtml, layOut(hostile).html, 'the HTML is made again from the new body');
    assert.equal(stored?.excerpt, excerpt(hostile));
    assert.equal(stored?.updatedAt, t.clock.now());
    const [listed] = (await apiPosts(token)).items;
    assert.equal(listed?.excerpt, excerpt(hostile));
    assert.match(listed!.excerpt, /^Now with <script>alert\(1\)<\/script> and <img/, 'plain text: the markup is words');
    assert.deepEqual([listed?.title, listed?.categoryName], ['After <b>', 'Edited']);

    const page = await new Visitor(t.baseUrl).get(`/posts/${id}`);
    const shownBody = /<div class="post-body">([\s\S]*?)<\/div>/.exec(page.text)![1]!;
    assert.match(shownBody, /<strong>Now<\/strong> with &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(page.text, /<script/i, 'no script element anywhere on the page');
    assert.doesNotMatch(shownBody, /<img/i);
    assert.doesNotMatch(shownBody, /href="(javascript|data):/i);
    assert.doesNotMatch(shownBody, /<a href="https:\/\/evil/);
    assert.match(page.text, /After &lt;b&gt;/);
    assert.match(page.text, /edited [^<(]+<span class="when">\(<time datetime="[^"]+">[^<]+ UTC\+8<\/time>\)/, 'the page says it was edited, how long ago and when');
    assert.doesNotMatch(page.text, /The first version/);

    const bad = await visitor.post(`/posts/${id}/edit`, { title: '', category: 'Edited', body: 'x', status: 'published' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Title: Use 1 to 120 characters\./);
    assert.equal((await t.deps.stores.posts.findById(id))?.excerpt, excerpt(hostile), 'a refused edit changes nothing');
  });

  test('only the author can edit, publish or delete a post: to anyone else it is the 404 of a post that does not exist', async () => {
    const { visitor } = await author();
    const published = await writeThroughForm(visitor, { title: 'Mine', body: 'Mine alone.', status: 'published' });
    const draft = await writeThroughForm(visitor, { title: 'My draft', body: 'Secret.', status: 'draft' });
    const { visitor: other } = await author();
    const missing = 2_000_000_000;
    const nothing = await other.get(`/posts/${missing}/edit`);
    assert.equal(nothing.status, 404);

    for (const id of [published, draft, missing]) {
      const attempts = [
        await other.get(`/posts/${id}/edit`),
        await other.get(`/posts/${id}/delete`),
        await other.post(`/posts/${id}/edit`, { title: 'Taken', category: 'Notes', body: 'Taken over.', status: 'published' }),
        await other.post(`/posts/${id}/edit`, { title: '', category: '', body: '', status: 'published' }),
        await other.post(`/posts/${id}/publish`, {}),
        await other.post(`/posts/${id}/delete`, { confirm: 'delete' }),
        await other.post(`/posts/${id}/delete`, {}),
      ];
      for (const response of attempts) {
        assert.equal(response.status, 404, `post ${id}`);
        assert.match(response.text, /There is nothing at this address/);
        assert.doesNotMatch(response.text, /Mine|My draft|Secret/, 'nothing of the post shows');
      }
    }
    const own = await visitor.get(`/posts/${published}`);
    assert.match(own.text, new RegExp(`href="/posts/${published}/edit"`), 'the author is offered to edit');
    const seen = await other.get(`/posts/${published}`);
    assert.doesNotMatch(seen.text, /\/edit"|\/delete"|\/publish"/, 'others are offered nothing of the sort');

    assert.equal((await t.deps.stores.posts.findById(published))?.title, 'Mine');
    assert.equal((await t.deps.stores.posts.findById(draft))?.status, 'draft');
    assert.equal((await t.deps.stores.posts.findById(draft))?.body, 'Secret.');

    const anonymous = new Visitor(t.baseUrl);
    for (const path of [`/posts/${published}/edit`, `/posts/${published}/delete`]) {
      const response = await anonymous.get(path);
      assert.equal(response.status, 303, path);
      assert.equal(response.location, `/login?return_to=${encodeURIComponent(path)}`);
    }
    assert.equal((await anonymous.post(`/posts/${published}/delete`, { confirm: 'delete' })).status, 303, 'to sign in');
    assert.ok(await t.deps.stores.posts.findById(published), 'still there');
  });

  test('deleting asks first: the question deletes nothing, and a POST that did not come from it asks again', async () => {
    const { visitor } = await author();
    const id = await writeThroughForm(visitor, { title: 'Doomed', body: 'Soon gone.', status: 'published' });
    const post = await visitor.get(`/posts/${id}`);
    assert.match(post.text, new RegExp(`<a class="button secondary" href="/posts/${id}/delete">Delete</a>`), 'a link to the question, not a form that deletes');

    const question = await visitor.get(`/posts/${id}/delete`);
    assert.equal(question.status, 200);
    assert.match(question.text, /Delete “Doomed”\?/);
    assert.match(question.text, new RegExp(`<form method="post" action="/posts/${id}/delete">`));
    assert.match(question.text, /name="confirm" value="delete"/);
    assert.ok(await t.deps.stores.posts.findById(id), 'asking deletes nothing');

    const unconfirmed = await visitor.post(`/posts/${id}/delete`, {});
    assert.equal(unconfirmed.status, 200);
    assert.match(unconfirmed.text, /Delete “Doomed”\?/);
    assert.ok(await t.deps.stores.posts.findById(id), 'a POST without the answer deletes nothing');

    const confirmed = await visitor.post(`/posts/${id}/delete`, { confirm: 'delete' });
    assert.equal(confirmed.status, 303);
    assert.match(confirmed.location ?? '', /^\/u\/writer\d+$/);
    assert.equal(await t.deps.stores.posts.findById(id), undefined);
    assert.equal((await visitor.get(`/posts/${id}`)).status, 404);
    assert.equal((await visitor.post(`/posts/${id}/delete`, { confirm: 'delete' })).status, 404, 'a second delete finds nothing');
  });

  test('a deleted post is gone from the API, its comments and likes with it', async () => {
    const { user, visitor, token } = await author();
    const kept = await writeThroughForm(visitor, { title: 'Kept', body: 'Stays.', status: 'published' });
    const doomed = await writeThroughForm(visitor, { title: 'Gone', body: 'Goes.', status: 'published' });
    const { user: reader, visitor: readerBrowser } = await author();
    await readerBrowser.post(`/posts/${doomed}/like`, {});
    await commentOnPost(t.deps.stores, t.clock, doomed, reader.id, 'Nice.');
    assert.deepEqual((await apiPosts(token)).items.map((p) => [p.title, p.likeCount, p.commentCount]), [['Gone', 1, 1], ['Kept', 0, 0]]);

    assert.equal((await visitor.post(`/posts/${doomed}/delete`, { confirm: 'delete' })).status, 303);
    const listed = await apiPosts(token);
    assert.deepEqual(listed.items.map((p) => p.id), [kept]);
    assert.equal(listed.totalElements, 1);
    const db = t.deps.database.db;
    assert.equal((await db.selectFrom('comments').select('id').where('post_id', '=', doomed).execute()).length, 0);
    assert.equal((await db.selectFrom('post_likes').select('user_id').where('post_id', '=', doomed).execute()).length, 0);
    assert.doesNotMatch((await new Visitor(t.baseUrl).get(`/u/${user.username}`)).text, /Gone/);
    assert.doesNotMatch((await new Visitor(t.baseUrl).get('/')).text, new RegExp(`href="/posts/${doomed}"`));
  });

  test('the demo shows counts its rows agree with: comments listed, likes given, posts on each profile', async () => {
    await seedDemo(t.deps.stores, t.clock, { baseUrl: t.baseUrl, when: 'no demo user' });
    const db = t.deps.database.db;
    const demo = (await t.deps.stores.users.findByUsername(DEMO_USERNAME))!;
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: demo.id, name: 'check', scopes: ['posts:read'], expiresInDays: 7 });
    const listed = await apiPosts(token);
    assert.equal(listed.totalElements, DEMO_POSTS.length, 'every published post, not the draft');
    const profile = (await new Visitor(t.baseUrl).get(`/u/${DEMO_USERNAME}`)).text;
    assert.equal(profile.match(/class="card post-card"/g)?.length, listed.totalElements, 'the profile lists as many posts as the API counts');

    const visitor = new Visitor(t.baseUrl);
    let comments = 0;
    for (const post of listed.items) {
      const page = (await visitor.get(`/posts/${post.id}`)).text;
      const shownComments = Number(/<span>(\d+) comments?<\/span>/.exec(page)![1]);
      const shownLikes = Number(/<span>(\d+) likes?<\/span>/.exec(page)![1]);
      const listedComments = page.match(/<li class="card">/g)?.length ?? 0;
      const likeRows = await db.selectFrom('post_likes').select('user_id').where('post_id', '=', post.id).execute();
      const commentRows = await db.selectFrom('comments').select('id').where('post_id', '=', post.id).execute();
      assert.equal(shownComments, listedComments, `"${post.title}" says ${shownComments} comments and lists ${listedComments}`);
      assert.equal(shownComments, commentRows.length, post.title);
      assert.equal(post.commentCount, commentRows.length, `the API's commentCount of "${post.title}"`);
      assert.equal(shownLikes, likeRows.length, `"${post.title}" says ${shownLikes} likes`);
      assert.equal(post.likeCount, likeRows.length, `the API's likeCount of "${post.title}"`);
      assert.ok(shownComments > 0 && shownLikes > 0, 'the demo shows some of each');
      comments += shownComments;
    }
    assert.equal(comments, DEMO_POSTS.reduce((n, p) => n + p.comments.length, 0));

    // Every member who commented has a profile, and it lists as many posts as they published.
    const commenters = new Set(DEMO_POSTS.flatMap((p) => p.comments.map(([name]) => name)));
    for (const name of commenters) {
      const member = await t.deps.stores.users.findByUsername(name);
      assert.equal(member?.status, 'active', name);
      const page = (await visitor.get(`/u/${name}`)).text;
      const { total } = await t.deps.stores.posts.listPublishedByAuthor(member!.id, 0, 50);
      assert.equal(page.match(/class="card post-card"/g)?.length ?? 0, total, name);
    }
    // The home page's cards say what the posts' pages say.
    const home = (await visitor.get('/')).text;
    for (const post of (await apiPosts(token)).items) {
      const card = new RegExp(`href="/posts/${post.id}">[\\s\\S]*?<span>(\\d+) likes?</span> · <span>(\\d+) comments?</span>`).exec(home);
      assert.deepEqual([Number(card![1]), Number(card![2])], [post.likeCount, post.commentCount], post.title);
    }
  });

  test('writing through /posts/new keeps its fields: title, category, body, and status published or draft', async () => {
    const { user, visitor, token } = await author();
    await writeThroughForm(visitor, { title: 'Scripted', body: 'By a script.', status: 'published' });
    await writeThroughForm(visitor, { title: 'Scripted draft', body: 'Not listed.', status: 'draft' });
    assert.deepEqual((await apiPosts(token)).items.map((p) => [p.title, p.categoryName, p.excerpt]), [['Scripted', 'Notes', 'By a script.']]);
    const written = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Core', body: 'x', category: 'Notes', status: 'published', commentCount: 2 });
    assert.equal(written.commentCount, 2, 'the command line\'s counts (INTERFACE section 9) still set');
  });

  /**
   * The answer to a POST whose head announces a body of the form's largest size, sent without
   * that body: a site that reads the body first answers nothing until it comes (then 408).
   */
  async function answerBeforeBody(path: string, cookies: string): Promise<{ status: number; location: string | undefined }> {
    const url = new URL(t.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\n`
      + `Content-Length: ${POST_FORM_BODY_LIMIT_BYTES}\r\n${cookies === '' ? '' : `Cookie: ${cookies}\r\n`}\r\ntitle=`);
    let head = '';
    for await (const chunk of socket) {
      head += (chunk as Buffer).toString('latin1');
      if (head.includes('\r\n\r\n')) break;
    }
    socket.destroy();
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), location: /\r\nlocation: ([^\r]*)/i.exec(head)?.[1] };
  }

  test('a POST to a post form from a browser nobody is signed in on is answered before its body is read, as a signed-out POST is', async () => {
    const { user } = await author();
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Kept', body: 'x', category: 'Notes', status: 'published' });
    const visitor = new Visitor(t.baseUrl);
    const csrf = `svc_csrf=${await visitor.csrf()}`;
    // What a signed-out POST with its body gets: to sign in, and back to the form's page.
    const withBody = await visitor.post('/posts/new', { title: 'x', category: 'y', body: 'z', status: 'published' });
    assert.equal(withBody.status, 303);
    assert.deepEqual(await answerBeforeBody('/posts/new', csrf), { status: 303, location: withBody.location ?? undefined });
    const edit = `/posts/${post.id}/edit`;
    assert.equal((await visitor.post(edit, { title: 'x', category: 'y', body: 'z' })).location, `/login?return_to=${encodeURIComponent(edit)}`);
    assert.deepEqual(await answerBeforeBody(edit, csrf), { status: 303, location: `/login?return_to=${encodeURIComponent(edit)}` });
    // A session cookie that names no session is no one signed in.
    assert.equal((await answerBeforeBody('/posts/new', `${csrf}; svc_session=made-up`)).status, 303);
    // Without a CSRF cookie the form cannot pass: its 403, as with the body.
    assert.equal((await answerBeforeBody('/posts/new', '')).status, 403);
    // An address that names no post: its 404.
    assert.equal((await answerBeforeBody('/posts/0/edit', csrf)).status, 404);
    assert.equal((await t.deps.stores.posts.findById(post.id))?.title, 'Kept');
  });

  test('a title, category or status beyond what the form allows is refused with the form\'s message in the reader\'s language, and not written back whole', async () => {
    const { user, visitor } = await author();
    visitor.cookies.set('lang', 'zh-CN');
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'Kept', body: 'x', category: 'Notes', status: 'draft' });
    for (const path of ['/posts/new', `/posts/${post.id}/edit`]) {
      const refused = await visitor.post(path, { title: 'T'.repeat(60_000), category: 'C'.repeat(60_000), body: 'Body', status: 'published' });
      assert.equal(refused.status, 400, path);
      assert.ok(refused.text.includes('请输入 1 到 120 个字符'), `${path}: the title's message, in Chinese`);
      assert.ok(refused.text.includes('请输入 1 到 40 个字符'), `${path}: the category's`);
      assert.ok(refused.text.includes(`value="${'T'.repeat(120)}"`) && !refused.text.includes('T'.repeat(121)), `${path}: the title cut to what a title may hold`);
      assert.ok(refused.text.includes(`value="${'C'.repeat(40)}"`) && !refused.text.includes('C'.repeat(41)), `${path}: the category too`);
      for (const status of ['Draft', 'x'.repeat(60_000)]) {
        const unknown = await visitor.post(path, { title: 'Title', category: 'Notes', body: 'Body', status });
        assert.equal(unknown.status, 400, `${path} with status ${status.slice(0, 10)}`);
        assert.ok(unknown.text.includes('请用表单上的按钮提交'), `${path}: the status's message, in Chinese`);
        assert.ok(!unknown.text.includes('xxxxxxxxxx'), 'the status is not written back');
      }
    }
    assert.deepEqual((await t.deps.stores.posts.listPublishedByAuthor(user.id, 0, 50)).items, [], 'nothing published');
    const kept = await t.deps.stores.posts.findById(post.id);
    assert.deepEqual([kept?.title, kept?.status], ['Kept', 'draft']);
  });

  test('a post has one address: an id other than its decimal digits without a leading zero is the site\'s 404 page', async () => {
    const { user, visitor } = await author();
    const post = await writePost(t.deps.stores, t.clock, { authorId: user.id, title: 'One address', body: 'x', category: 'Notes', status: 'published' });
    const id = post.id;
    assert.equal((await visitor.get(`/posts/${id}`)).status, 200);
    // What ajv's type coercion read as the same number, and ids past what an id column holds.
    const others = [`0x${id.toString(16)}`, `${id}e0`, `+${id}`, `0${id}`, `${id}.0`, `%20${id}`, '0', '-1', '2147483648', '99999999999'];
    for (const other of others) {
      for (const path of [`/posts/${other}`, `/posts/${other}/edit`, `/avatars/${other}`]) {
        const answer = await visitor.get(path);
        assert.equal(answer.status, 404, path);
        if (!path.startsWith('/avatars/')) assert.match(answer.text, /Page not found/, path);
      }
      assert.equal((await visitor.post(`/posts/${other}/like`, {})).status, 404, `POST /posts/${other}/like`);
    }
    assert.equal((await t.deps.stores.posts.findById(id))?.likeCount, 0, 'no like through another address');
  });
});

test('the demo posts are Markdown alone, since a page shows HTML in a body as typed: no body holds a tag', () => {
  for (const post of DEMO_POSTS) {
    assert.doesNotMatch(layOut(post.body).html, /&lt;\/?[a-z]/i, `${post.title}: its page would show a tag as text`);
  }
});
