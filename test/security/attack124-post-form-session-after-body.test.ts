/**
 * attack124: a post's form checks whether anyone is signed in before its body is read, to answer a
 * signed-out browser at once; the post is then written only if the session is still live once the
 * body has come. A body may take up to the request timeout (30 s) to arrive: a session ended in
 * that time (the member suspended, or signed out everywhere after the session was stolen) must not
 * write a post. Over real HTTP, on every database.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';

forEachDatabase('attack124: a post form\'s session after its body', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('a post is written only by a session still live once its form\'s body has been read', async () => {
    const { user, visitor } = await signedInMember(t, `slow${Date.now() % 100_000}`, 'correct horse battery staple');
    const csrf = await visitor.csrf();
    const { cookie } = visitor.cookieHeader();
    const body = new URLSearchParams({ _csrf: csrf, title: 'Written after suspension', category: 'Notes', body: 'x', status: 'published' }).toString();

    // The head is read (and the session looked up) before any of the body comes.
    const sessions = t.deps.stores.sessions;
    const findLive = sessions.findLive.bind(sessions);
    let headRead!: () => void;
    const looked = new Promise<void>((resolve) => { headRead = resolve; });
    sessions.findLive = async (...args) => {
      const found = await findLive(...args);
      headRead();
      return found;
    };
    try {
      const url = new URL(t.baseUrl);
      const socket = connect(Number(url.port), url.hostname);
      socket.write(`POST /posts/new HTTP/1.1\r\nHost: ${url.host}\r\nOrigin: ${url.origin}\r\nContent-Type: application/x-www-form-urlencoded\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`);
      await looked;
      // While the body is still on its way, the member is suspended: the session ends.
      await t.deps.stores.users.setStatus(user.id, 'suspended', t.clock.now());
      socket.write(body);
      let answer = '';
      for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      const location = /\r\nlocation: ([^\r]*)/i.exec(answer)?.[1];
      assert.deepEqual({ status, location }, { status: 303, location: `/login?return_to=${encodeURIComponent('/posts/new')}` });
    } finally {
      sessions.findLive = findLive;
    }
    assert.deepEqual((await t.deps.stores.posts.listPublishedByAuthor(user.id, 0, 50)).items, [], 'no post written by the ended session');
  });
});
