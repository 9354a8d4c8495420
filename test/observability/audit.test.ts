/**
 * Audit events in the server's log (src/core/audit.ts): the compiled server as a process, driven
 * over real HTTP as browsers and a client app would, its standard output read line by line. Every
 * secret the run handled (passwords, codes, tokens, client secrets, cookies) is then looked for
 * in the whole output, and must not be there.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { AUDIT_EVENTS } from '../../src/core/audit.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import type { Client } from '../../src/core/oauth/ports.js';
import { svc } from '../support/cli.js';
import { forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import { compiled, run, SERVICE_ENTRY } from '../support/processes.js';
import type { TestApp } from '../support/app.js';
import { Browser, type TestClient, clientFields, codeExchangeFields, obtainCode, pkcePair, tokenRequest } from '../oauth/helpers.js';

type Line = Record<string, unknown> & { audit: string };

test('the README lists every audit event with its fields, in the order of AUDIT_EVENTS', () => {
  const readme = readFileSync('README.md', 'utf8');
  const table = readme.slice(readme.indexOf('| Event | Fields | When |'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  const listed = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]));
  assert.deepEqual(listed, [...AUDIT_EVENTS]);
});

forEachDatabase('audit events in the server log', (database) => {
  test('each security event is one JSON line with ids and categories, and no secret is anywhere in the log', async () => {
    const secrets: string[] = [];
    const keep = (secret: string) => { secrets.push(secret); return secret; };
    const username = `aud${randomBytes(3).toString('hex')}`;
    const password = keep(`pw ${randomBytes(8).toString('hex')}`);
    const user = svc(database.url, ['user', 'create', '--username', username, '--password', password, '--json']).json as { id: number };
    const registered = svc(database.url, ['client', 'create', '--name', 'Audit App', '--type', 'confidential',
      '--redirect-uri', 'https://app.example/callback', '--json']).json as { client_id: string; client_secret: string };
    keep(registered.client_secret);

    compiled();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // LOG_LEVEL=warn quiets the request log; audit lines are written all the same. The replay
    // window is turned on, so a replay's event is written too.
    const server = run(process.execPath, [SERVICE_ENTRY], {
      DATABASE_URL: database.url, PORT: String(port), BASE_URL: baseUrl, DEMO: '0', LOG_LEVEL: 'warn', JANITOR_INTERVAL: '0', REFRESH_REPLAY_SECONDS: '20',
    });
    try {
      await server.waitFor(/Listening on/);
      const t = { baseUrl } as TestApp;
      const app: TestClient = { client: { clientId: registered.client_id } as Client, secret: registered.client_secret, redirectUri: 'https://app.example/callback' };
      const browser = new Browser(t);

      // Sign-in: a wrong password, a pasted wall of text, then the right password.
      assert.equal((await browser.signIn(username, keep('not my password at all'))).status, 401);
      assert.equal((await browser.signIn('x'.repeat(200), 'whatever')).status, 401);
      assert.equal((await browser.signIn(username, password)).status, 303);

      // The code flow: consent, tokens, the code again (reuse), then a refresh, its replay and its reuse.
      const redeem = async () => {
        const pkce = pkcePair();
        const code = keep(await obtainCode(browser, app, { pkce }));
        const fields = codeExchangeFields(app, code, pkce);
        const response = await tokenRequest(t, fields);
        assert.equal(response.status, 200);
        const tokens = (await response.json()) as { access_token: string; refresh_token: string };
        keep(tokens.access_token);
        keep(tokens.refresh_token);
        return { fields, tokens };
      };
      const first = await redeem();
      const again = await tokenRequest(t, first.fields);
      assert.equal(again.status, 400);
      const second = await redeem();
      const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.tokens.refresh_token, ...clientFields(app) });
      assert.equal(refreshed.status, 200);
      const successor = keep(((await refreshed.json()) as { refresh_token: string }).refresh_token);
      // Presented again at once: a replay (the same answer); once the successor is used: reuse.
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.tokens.refresh_token, ...clientFields(app) })).status, 200);
      const next = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: successor, ...clientFields(app) });
      assert.equal(next.status, 200);
      keep(((await next.json()) as { refresh_token: string }).refresh_token);
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.tokens.refresh_token, ...clientFields(app) })).status, 400);
      const third = await redeem();
      const revoke = await fetch(`${baseUrl}/api/oauth/revoke`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: third.tokens.refresh_token, ...clientFields(app) }).toString(),
      });
      assert.equal(revoke.status, 200);
      const fourth = await redeem();

      // Settings: a personal token (after a wrong password, then the right one), then revoked.
      const csrf = () => browser.cookies.get('svc_csrf')!;
      await browser.fetch('/settings/tokens');
      const tokenForm = { _csrf: csrf(), name: 'ci', scopes: 'profile:read', expires_in_days: '30' };
      assert.equal((await browser.postForm('/settings/tokens', { ...tokenForm, password: keep('a wrong password') })).status, 400);
      const created = await browser.postForm('/settings/tokens', { ...tokenForm, password });
      assert.equal(created.status, 303);
      const tokensPage = await (await browser.fetch('/settings/tokens')).text();
      const personal = keep(/svcp_\w+/.exec(tokensPage)![0]);
      const tokenId = /name="token_id" value="(\d+)"/.exec(tokensPage)![1]!;
      assert.equal((await browser.postForm('/settings/tokens/revoke', { _csrf: csrf(), token_id: tokenId, confirm: 'yes' })).status, 303);

      // A developer app: registered, its secret rotated, deactivated.
      const app2 = await browser.postForm('/settings/developers', {
        _csrf: csrf(), name: 'Mine', description: '', homepage: '', redirect_uris: 'https://mine.example/cb', type: 'confidential',
      });
      assert.equal(app2.status, 303);
      const mine = /^\/settings\/developers\/(\w+)/.exec(app2.headers.get('location')!)![1]!;
      keep(/svcs_\w+/.exec(await (await browser.fetch(app2.headers.get('location')!)).text())![0]);
      const rotated = await browser.postForm(`/settings/developers/${mine}/rotate-secret`, { _csrf: csrf(), confirm: 'yes' });
      assert.equal(rotated.status, 303);
      keep(/svcs_\w+/.exec(await (await browser.fetch(rotated.headers.get('location')!)).text())![0]);
      assert.equal((await browser.postForm(`/settings/developers/${mine}/deactivate`, { _csrf: csrf(), confirm: 'yes' })).status, 303);

      // Two-step verification turned on: an event of the account's security log, an audit line too.
      const started = await (await browser.postForm('/settings/security', { _csrf: csrf(), action: 'totp-start' })).text();
      const totpSecret = keep(/id="totp-secret">([A-Z2-7 ]+)</.exec(started)![1]!.replace(/ /g, ''));
      const enabled = await browser.postForm('/settings/security', { _csrf: csrf(), action: 'totp-confirm', code: totpCode(totpSecret, Date.now()) });
      assert.equal(enabled.status, 200);
      for (const [, code] of (await enabled.text()).matchAll(/<li>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})<\/li>/g)) keep(code!);

      // A copy of the account's data: an event of the security log, an audit line too.
      assert.equal((await browser.postForm('/settings/account/data', { _csrf: csrf(), password })).status, 200);

      // Consent withdrawn, then sign-out.
      assert.equal((await browser.postForm('/settings/applications/revoke', { _csrf: csrf(), client_id: registered.client_id })).status, 303);
      for (const cookie of ['svc_session', 'svc_csrf', 'svc_device']) keep(browser.cookies.get(cookie)!);
      assert.equal((await browser.postForm('/logout', { _csrf: csrf() })).status, 303);
      keep(personal);
      assert.equal((await fetch(`${baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${fourth.tokens.access_token}` } })).status, 401);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }

    const lines = server.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const events = lines.filter((l): l is Line => typeof l.audit === 'string');
    assert.deepEqual(events.map((e) => e.audit), [
      'sign_in.failed', 'sign_in.failed', 'sign_in.succeeded',
      'consent.granted', 'token.issued', 'code.reuse_detected',
      'token.issued', 'token.refreshed', 'refresh_token.replayed', 'token.refreshed', 'refresh_token.reuse_detected',
      'token.issued', 'token.revoked', 'token.issued',
      'password_confirm.failed', 'personal_token.created', 'personal_token.revoked',
      'client.registered', 'client.secret_rotated', 'client.deactivated', 'totp.enabled', 'account.data_downloaded',
      'consent.withdrawn', 'sign_out',
    ]);
    for (const event of events) {
      assert.ok(AUDIT_EVENTS.includes(event.audit as never), event.audit);
      assert.equal(event.msg, 'audit');
      assert.equal(event.level, 30);
    }
    const find = (name: string, n = 0) => events.filter((e) => e.audit === name)[n]!;
    const pick = (event: Line, ...keys: string[]) => Object.fromEntries(keys.map((k) => [k, event[k]]));
    assert.deepEqual(pick(find('sign_in.failed'), 'username', 'reason', 'userId', 'address'),
      { username, reason: 'invalid_credentials', userId: user.id, address: '127.0.0.1' });
    assert.deepEqual(pick(find('sign_in.failed', 1), 'username', 'reason', 'userId'), { username: 'x'.repeat(64), reason: 'invalid_credentials', userId: undefined });
    assert.deepEqual(pick(find('sign_in.succeeded'), 'userId', 'username', 'address', 'method'), { userId: user.id, username, address: '127.0.0.1', method: 'password' });
    assert.deepEqual(pick(find('totp.enabled'), 'userId', 'via', 'address'), { userId: user.id, via: 'site', address: '127.0.0.1' });
    assert.deepEqual(pick(find('account.data_downloaded'), 'userId', 'via', 'address'), { userId: user.id, via: 'site', address: '127.0.0.1' });
    // The account's security log writes through the same sink: no line of another shape.
    assert.ok(lines.every((l) => l.audit === undefined || typeof l.audit === 'string'), 'no object-valued audit field');
    const issued = find('token.issued');
    assert.deepEqual(pick(issued, 'via', 'clientId', 'userId', 'scope'), { via: 'oauth', clientId: registered.client_id, userId: user.id, scope: 'profile:read posts:read' });
    assert.equal(typeof issued.grantId, 'number');
    // A reuse names the address it came from: the code or the token was in someone's hands.
    assert.deepEqual(pick(find('code.reuse_detected'), 'clientId', 'userId', 'grantsRevoked', 'address'), { clientId: registered.client_id, userId: user.id, grantsRevoked: 1, address: '127.0.0.1' });
    assert.equal(find('refresh_token.reuse_detected').grantId, find('token.issued', 1).grantId);
    assert.equal(find('refresh_token.reuse_detected').address, '127.0.0.1');
    assert.deepEqual(pick(find('refresh_token.replayed'), 'via', 'clientId', 'userId', 'grantId', 'address'),
      { via: 'oauth', clientId: registered.client_id, userId: user.id, grantId: find('token.issued', 1).grantId, address: '127.0.0.1' });
    assert.deepEqual(pick(find('token.revoked'), 'kind', 'grantId'), { kind: 'refresh', grantId: find('token.issued', 2).grantId });
    assert.deepEqual(pick(find('personal_token.created'), 'userId', 'tokenId', 'scope', 'via', 'address'),
      { userId: user.id, tokenId: Number(find('personal_token.revoked').tokenId), scope: 'profile:read', via: 'site', address: '127.0.0.1' });
    // The fourth grant was the one still live.
    assert.deepEqual(pick(find('consent.withdrawn'), 'userId', 'clientId', 'grantsRevoked'), { userId: user.id, clientId: registered.client_id, grantsRevoked: 1 });
    assert.deepEqual(pick(find('sign_out'), 'userId', 'address'), { userId: user.id, address: '127.0.0.1' });

    const everything = server.output();
    for (const secret of secrets) assert.ok(!everything.includes(secret), `a secret is in the log: ${secret.slice(0, 8)}…`);
  });
});
