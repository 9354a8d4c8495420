/**
 * The staff console's gates (INTERFACE section 14), over real HTTP on each database: nothing under
 * /admin answers anyone but staff with two-step verification, every answer there carries the
 * console's headers, and every change needs the CSRF field, a recent sign-in, a reason and a
 * confirmation, follows who may act on whom, and is in the staff log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RECENT_SIGN_IN_MS } from '../../src/core/accounts/sessions.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';
import { type PageResponse, Visitor } from '../site/visitor.js';
import { type Person, consoleRoutes, person, signInAgain } from './support.js';

const REASON = 'spam in three threads';

/** A page without what differs by address alone (where the language picker comes back to). */
const pageOf = (response: PageResponse) => response.text.replace(/action="\/language\?[^"]*"/, '');

function assertConsoleHeaders(response: PageResponse, what: string): void {
  assert.equal(response.headers.get('cache-control'), 'no-store', what);
  assert.equal(response.headers.get('x-robots-tag'), 'noindex', what);
  assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, what);
  assert.equal(response.headers.get('x-frame-options'), 'DENY', what);
}

forEachDatabase('staff console gates', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  /** A real member and a real app for the routes' parameters, so a 404 is never just "no such member". */
  async function parameters(): Promise<Record<string, string>> {
    const target = await person(t, 'member', { twoStep: false });
    const client = await registerClient(t.deps.stores, t.clock, { name: 'Gate App', type: 'public', redirectUris: ['https://gate.example/cb'], ownerId: target.user.id });
    return { id: String(target.user.id), clientId: client.client.clientId };
  }

  test('every route under /admin, by every method, answers a signed-out visitor, a member and staff without two-step with nothing but 404 or the two-step page', async () => {
    const routes = consoleRoutes(t);
    assert.ok(routes.some((r) => r.path === '/admin/members/:id/status'), `the route list was read: ${JSON.stringify(routes)}`);
    const values = await parameters();
    const visitors: Array<[string, Visitor, 'not_found' | 'two_step']> = [
      ['signed out', new Visitor(t.baseUrl), 'not_found'],
      ['member', (await person(t, 'member', { twoStep: true })).visitor, 'not_found'],
      ['moderator without two-step', (await person(t, 'moderator', { twoStep: false })).visitor, 'two_step'],
      ['admin without two-step', (await person(t, 'admin', { twoStep: false })).visitor, 'two_step'],
    ];
    const logBefore = (await t.deps.stores.staffLog.list({ limit: 1000 })).length;
    for (const { path, methods } of routes) {
      const url = path.replace(/:(\w+)/g, (_, name: string) => values[name] ?? '1');
      for (const method of methods) {
        for (const [who, visitor, expected] of visitors) {
          // An address no page has is behind the gate too: staff without two-step are asked to turn it on there as well.
          const nowhere = await visitor.get('/admin/no-such-page');
          assert.equal(nowhere.status, expected === 'not_found' ? 404 : 403);
          const what = `${method} ${url} as ${who}`;
          const response = method === 'POST'
            ? await visitor.post(url, { reason: REASON, confirm: 'yes', status: 'suspended', role: 'admin', verified: 'yes', now: 'yes' })
            : await visitor.request(url, { method });
          assertConsoleHeaders(response, what);
          if (expected === 'not_found') {
            assert.equal(response.status, 404, what);
            // The same answer as an address that does not exist: nothing tells the console is there.
            if (method === 'GET') assert.equal(pageOf(response), pageOf(nowhere), what);
          } else {
            assert.equal(response.status, 403, what);
            if (method !== 'HEAD') assert.match(response.text, /Turn on two-step verification first/, what);
          }
        }
      }
    }
    assert.equal((await t.deps.stores.users.findById(Number(values.id)))?.status, 'active', 'nothing was changed');
    assert.equal((await t.deps.stores.staffLog.list({ limit: 1000 })).length, logBefore, 'nothing was logged');
  });

  test('an address under /admin that no route takes is a 404 by any method, never a 405 that tells a route is there', async () => {
    const { visitor } = await person(t, 'member', { twoStep: false });
    for (const [method, path] of [['GET', '/admin/members/1/status'], ['PUT', '/admin'], ['DELETE', '/admin/members/1']] as const) {
      const response = await visitor.request(path, { method });
      assert.equal(response.status, 404, `${method} ${path}`);
      assertConsoleHeaders(response, `${method} ${path}`);
    }
  });

  test('every request under /admin no page takes, /admin itself by any method and an address that does not decode among them, is the console\'s catch-all: staff read its not-found page in the console\'s frame, staff without two-step the page asking for it, anyone else the site\'s own 404', async () => {
    const staff = await person(t, 'moderator', { twoStep: true });
    const withoutTwoStep = await person(t, 'moderator', { twoStep: false });
    const others: Array<[string, Visitor]> = [['signed out', new Visitor(t.baseUrl)], ['member', (await person(t, 'member', { twoStep: true })).visitor]];
    // What differs by address alone besides the language picker's way back: the section marked current.
    const consolePageOf = (response: PageResponse) => pageOf(response).replace(/ aria-current="page"/g, '');
    const requests: Array<[string, string]> = [
      ['PUT', '/admin'], ['DELETE', '/admin'], ['POST', '/admin'], ['PATCH', '/admin?q=1'], ['OPTIONS', '/admin'], ['OPTIONS', '/admin/members'],
      // Methods of WebDAV, which Fastify does not route unless told to.
      ['PROPFIND', '/admin/members'], ['MKCOL', '/admin'],
      // Addresses the router cannot decode (malformed percent-escapes).
      ['GET', '/admin/%zz'], ['GET', '/admin/members/%E0%A4%A?q=%zz'], ['DELETE', '/admin/members/%ff'],
    ];
    for (const [method, path] of requests) {
      const what = `${method} ${path}`;
      // The catch-all's own answer: the same method at an address it has always taken.
      const caught = await staff.visitor.request('/admin/no-such-page', { method });
      const answer = await staff.visitor.request(path, { method });
      assertConsoleHeaders(answer, what);
      assert.equal(answer.status, 404, what);
      assert.ok(answer.text.includes('<nav class="settings-nav" aria-label="Staff console">'), `${what}: the console's navigation`);
      assert.ok(answer.text.includes('<a href="/admin">Back to the staff console</a>'), `${what}: the way back to the console`);
      assert.equal(consolePageOf(answer), consolePageOf(caught), what);
      const asked = await withoutTwoStep.visitor.request(path, { method });
      assertConsoleHeaders(asked, what);
      assert.equal(asked.status, 403, `${what} without two-step`);
      assert.match(asked.text, /Turn on two-step verification first/, `${what} without two-step`);
      for (const [who, visitor] of others) {
        const refused = await visitor.request(path, { method });
        assertConsoleHeaders(refused, `${what} as ${who}`);
        assert.equal(refused.status, 404, `${what} as ${who}`);
        // The site's own 404, as for an address that does not exist: nothing tells the console is there.
        assert.equal(pageOf(refused), pageOf(await visitor.request('/no-such-page', { method })), `${what} as ${who}`);
        assert.ok(refused.text.includes(`action="/language?${new URLSearchParams({ return_to: path })}"`), `${what} as ${who}: the language picker comes back to the address as sent`);
      }
    }
  });

  test('a request line in absolute form (RFC 9112 3.2.2) is answered as its path and query are: an address under /admin that does not decode is the console\'s not-found page to staff and the site\'s own 404 to anyone else, never the site\'s 400 page', async () => {
    const staff = await person(t, 'moderator', { twoStep: true });
    const visitors: Array<[string, Visitor]> = [['staff', staff.visitor], ['signed out', new Visitor(t.baseUrl)], ['member', (await person(t, 'member', { twoStep: true })).visitor]];
    for (const path of ['/admin/%zz', '/admin/members/%ff?q=%zz', '/admin/members?q=a', '/x/%zz']) {
      for (const [who, visitor] of visitors) {
        const what = `GET ${t.baseUrl}${path} as ${who}`;
        const cookies = visitor.cookies.size === 0 ? [] : ['Cookie', [...visitor.cookies].map(([name, value]) => `${name}=${value}`).join('; ')];
        const answer = await rawRequest('GET', t.baseUrl, cookies, undefined, { target: t.baseUrl + path });
        const asPath = await visitor.get(path);
        assert.equal(answer.status, asPath.status, what);
        assert.equal(answer.headers['x-robots-tag'], asPath.headers.get('x-robots-tag') ?? undefined, what);
        assert.equal(pageOf({ ...asPath, text: answer.body }), pageOf(asPath), what);
      }
    }
  });

  test('a request under /admin with a body Fastify cannot read (malformed JSON, a QUERY without Content-Type) gets, from anyone who is not staff, the answer an address that does not exist gets, and staff the console\'s not-found page', async () => {
    const staff = await person(t, 'moderator', { twoStep: true });
    const others: Array<[string, Visitor]> = [['signed out', new Visitor(t.baseUrl)], ['member', (await person(t, 'member', { twoStep: true })).visitor]];
    const json = { headers: { 'content-type': 'application/json' }, body: '{"reason":' };
    const requests: Array<[string, string, RequestInit]> = [
      ['POST', '/admin/members', json], ['PUT', '/admin', json], ['DELETE', '/admin/members/1', json], ['OPTIONS', '/admin', json],
      ['QUERY', '/admin/members', json], ['QUERY', '/admin', { body: 'q=1' }],
    ];
    for (const [method, path, init] of requests) {
      const caught = await staff.visitor.request(path, { method, ...init });
      assert.equal(caught.status, 404, `${method} ${path} as staff`);
      assert.ok(caught.text.includes('<nav class="settings-nav" aria-label="Staff console">'), `${method} ${path} as staff: the console's navigation`);
      assert.ok(caught.text.includes('<a href="/admin">Back to the staff console</a>'), `${method} ${path} as staff: the way back to the console`);
      for (const [who, visitor] of others) {
        const what = `${method} ${path} as ${who}`;
        const refused = await visitor.request(path, { method, ...init });
        const nowhere = await visitor.request('/no-such-page', { method, ...init });
        assert.equal(refused.status, 404, what);
        // The site's own answer to the same request at an address that does not exist: the same status, type and page.
        assert.equal(nowhere.status, refused.status, what);
        assert.equal(nowhere.headers.get('content-type'), refused.headers.get('content-type'), what);
        assert.equal(pageOf(nowhere), pageOf(refused), what);
      }
    }
  });

  test('an address under /admin with a segment too long for a route is the same 404 as any other', async () => {
    const { visitor } = await person(t, 'member', { twoStep: false });
    const long = 'a'.repeat(300);
    const nowhere = await visitor.get(`/admin/no-such-page/${long}`);
    for (const path of [`/admin/members/${long}`, `/admin/apps/${long}`, `/admin/apps/${long}/status`]) {
      const response = await visitor.get(path);
      assert.equal(response.status, 404, path);
      assertConsoleHeaders(response, path);
      assert.equal(response.headers.get('content-type'), nowhere.headers.get('content-type'), path);
    }
  });

  async function staffAndMember(role: 'moderator' | 'admin' = 'moderator'): Promise<{ staff: Person; member: Person }> {
    return { staff: await person(t, role, { twoStep: true }), member: await person(t, 'member', { twoStep: false }) };
  }

  test('a change asks first: the first POST shows what will happen and changes nothing; its form changes it and writes the staff log', async () => {
    const { staff, member } = await staffAndMember();
    const path = `/admin/members/${member.user.id}/status`;
    const asked = await staff.visitor.post(path, { status: 'suspended', reason: REASON });
    assert.equal(asked.status, 200);
    assertConsoleHeaders(asked, 'confirmation');
    assert.match(asked.text, /will no longer be able to sign in/);
    assert.match(asked.text, /name="confirm" value="yes"/);
    assert.equal((await t.deps.stores.users.findById(member.user.id))?.status, 'active', 'not yet');
    const done = await staff.visitor.post(path, { status: 'suspended', reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal(done.location, `/admin/members/${member.user.id}?notice=status`);
    assert.equal((await t.deps.stores.users.findById(member.user.id))?.status, 'suspended');
    const [entry] = await t.deps.stores.staffLog.list({ limit: 1, target: { kind: 'member', id: String(member.user.id) } });
    assert.deepEqual(
      { actorId: entry?.actorId, actorName: entry?.actorName, action: entry?.action, targetName: entry?.targetName, detail: entry?.detail, reason: entry?.reason },
      { actorId: staff.user.id, actorName: staff.user.username, action: 'member.status', targetName: member.user.username, detail: { from: 'active', status: 'suspended' }, reason: REASON },
    );
    const audit = t.audit.filter((e) => e.audit === 'staff.action' && e.staffLogId === entry!.id);
    assert.equal(audit.length, 1, 'one audit event');
  });

  test('a change without the form\'s CSRF field, or from another site, is refused and changes nothing', async () => {
    const { staff, member } = await staffAndMember();
    const path = `/admin/members/${member.user.id}/status`;
    assert.equal((await staff.visitor.post(path, { status: 'banned', reason: REASON, confirm: 'yes' }, { csrf: null })).status, 403);
    const forged = await staff.visitor.request(path, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ _csrf: await staff.visitor.csrf(), status: 'banned', reason: REASON, confirm: 'yes' }),
    });
    assert.equal(forged.status, 403);
    assert.equal((await t.deps.stores.users.findById(member.user.id))?.status, 'active');
  });

  test('a reason of fewer than 3 or more than 500 characters is asked for again (400) and changes nothing', async () => {
    const { staff, member } = await staffAndMember();
    for (const reason of ['', '  x ', 'y'.repeat(501)]) {
      const response = await staff.visitor.post(`/admin/members/${member.user.id}/status`, { status: 'banned', reason, confirm: 'yes' });
      assert.equal(response.status, 400, JSON.stringify(reason.slice(0, 10)));
      assert.match(response.text, /Give a reason of 3 to 500 characters/);
    }
    assert.equal((await t.deps.stores.users.findById(member.user.id))?.status, 'active');
  });

  test('a reason holding control characters (NUL, terminal escapes), direction overrides or nothing a reader sees is asked for again (400) and logs nothing', async () => {
    const { staff, member } = await staffAndMember();
    const logBefore = (await t.deps.stores.staffLog.list({ limit: 1000 })).length;
    for (const reason of ['spam\u0000 here', 'spam \u001b[2J\u001b]0;title\u0007', 'spam \u202egnp.exe', '\u200b\u200b\u200b']) {
      const response = await staff.visitor.post(`/admin/members/${member.user.id}/sessions/revoke`, { reason, confirm: 'yes' });
      assert.equal(response.status, 400, JSON.stringify(reason));
      assert.match(response.text, /Remove the control characters|Use at least one character a reader can see/, JSON.stringify(reason));
    }
    assert.equal((await t.deps.stores.staffLog.list({ limit: 1000 })).length, logBefore);
  });

  test('a change 15 minutes after the sign-in goes to the sign-in page and back to the member\'s page; signed in again, it is made', async () => {
    const { staff, member } = await staffAndMember();
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    const back = `/admin/members/${member.user.id}`;
    const stale = await staff.visitor.post(`${back}/sessions/revoke`, { reason: REASON, confirm: 'yes' });
    assert.equal(stale.status, 303);
    assert.equal(stale.location, `/login?reauth=1&return_to=${encodeURIComponent(back)}`);
    assert.equal((await t.deps.stores.staffLog.list({ limit: 5, target: { kind: 'member', id: String(member.user.id) } })).length, 0);
    await signInAgain(t, staff);
    const done = await staff.visitor.post(`${back}/sessions/revoke`, { reason: REASON, confirm: 'yes' });
    assert.equal(done.status, 303);
    assert.equal((await t.deps.stores.sessions.listForUser(member.user.id, t.clock.now())).length, 0, 'signed out everywhere');
  });

  test('staff cannot change their own status or role', async () => {
    const admin = await person(t, 'admin', { twoStep: true });
    const own = `/admin/members/${admin.user.id}`;
    for (const [path, fields] of [[`${own}/status`, { status: 'active' }], [`${own}/role`, { role: 'moderator' }]] as const) {
      const response = await admin.visitor.post(path, { ...fields, reason: REASON, confirm: 'yes' });
      assert.equal(response.status, 403, path);
      assert.match(response.text, /cannot change their own account/);
    }
    assert.equal(await t.deps.stores.roles.roleOf(admin.user.id), 'admin');
  });

  test('moderators act on members only, and never on roles; admins act on staff and roles', async () => {
    const moderator = await person(t, 'moderator', { twoStep: true });
    const fellow = await person(t, 'moderator', { twoStep: false });
    const member = await person(t, 'member', { twoStep: false });
    const onFellow = await moderator.visitor.post(`/admin/members/${fellow.user.id}/status`, { status: 'banned', reason: REASON, confirm: 'yes' });
    assert.equal(onFellow.status, 403);
    assert.match(onFellow.text, /Moderators act on members only/);
    const role = await moderator.visitor.post(`/admin/members/${member.user.id}/role`, { role: 'admin', reason: REASON, confirm: 'yes' });
    assert.equal(role.status, 403);
    assert.match(role.text, /Only admins can do this/);
    assert.equal(await t.deps.stores.roles.roleOf(member.user.id), 'member');
    const admin = await person(t, 'admin', { twoStep: true });
    assert.equal((await admin.visitor.post(`/admin/members/${fellow.user.id}/status`, { status: 'suspended', reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal((await admin.visitor.post(`/admin/members/${member.user.id}/role`, { role: 'moderator', reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal(await t.deps.stores.roles.roleOf(member.user.id), 'moderator');
  });
});
