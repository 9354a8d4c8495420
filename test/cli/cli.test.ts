/** The command line (INTERFACE section 9), compiled, run as a process against each database. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { AUDIT_EVENTS } from '../../src/core/audit.js';
import { generateOpaqueId, hashSecret, tokenKind } from '../../src/core/credentials/formats.js';
import { verifyPassword } from '../../src/core/accounts/passwords.js';
import { MAX_PERSONAL_TOKENS, PERSONAL_TOKENS_PER_DAY } from '../../src/core/credentials/personal-tokens.js';
import { days, formatUtc } from '../../src/core/time.js';
import type { Stores } from '../../src/core/stores.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { createStores } from '../../src/storage/stores.js';
import { type CliResult, HOSTILE_PORT, HOSTILE_PORT_SHOWN, svc, svcAtTerminal, svcWithStderrAt } from '../support/cli.js';
import { forEachDatabase, temporarySqlitePath, whileInsertsFail } from '../support/databases.js';
import { fullWidth } from '../support/full-width.js';

const name = (prefix: string) => `${prefix}${randomBytes(3).toString('hex')}`;

/** Exit code 2, one line on stderr, nothing on stdout. */
function assertBadArguments(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, message);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
}

/** The audit lines a command wrote on stderr (JSON, one a line). */
function auditLines(result: CliResult): Array<Record<string, unknown>> {
  return result.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

forEachDatabase('command line', (database) => {
  const run = (...args: string[]) => svc(database.url, args);
  /** Runs with `input` on standard input. */
  const runWith = (input: string, ...args: string[]) => svc(database.url, args, {}, input);
  let handle: DatabaseHandle;
  let stores: Stores;
  before(() => {
    // Migrated by the first command; opened here to look at what the commands wrote.
    assert.equal(run('migrate', '--json').code, 0);
    handle = openDatabase(database.target);
    stores = createStores(handle.db, handle.queries);
  });
  after(() => handle.close());

  test('migrate prints {"ok":true}', () => {
    const r = run('migrate', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { ok: true });
  });

  test('user create prints the id as a number and the username', () => {
    const username = name('ann');
    const r = run('user', 'create', '--username', username, '--password', 'long enough pw', '--bio', 'Hi', '--member', '--level', '3', '--xp', '40', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['id', 'username']);
    assert.equal(typeof r.json.id, 'number');
    assert.equal(r.json.username, username);
  });

  test('user create --xp takes any count it accepts, past 2^31 too, on both databases (migration 2026-11-28-0030-bigint-counters)', async () => {
    const username = name('xp');
    const r = run('user', 'create', '--username', username, '--password', 'long enough pw', '--xp', '999999999999999', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await stores.users.findByUsername(username))?.xp, 999_999_999_999_999);
  });

  test('user create --nickname stores the nickname in any script; one with a bidi override is a bad argument (INTERFACE section 12)', async () => {
    const username = name('lin');
    const r = run('user', 'create', '--username', username, '--password', 'long enough pw', '--nickname', ' 林小伟 ', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await stores.users.findByUsername(username))?.nickname, '林小伟', 'trimmed');
    const refused = name('rlo');
    assertBadArguments(run('user', 'create', '--username', refused, '--password', 'long enough pw', '--nickname', 'evil\u202egnp', '--json'), /nickname/);
    assert.equal(await stores.users.findByUsername(refused), undefined, 'nothing made');
  });

  test('user create reads a username typed in full-width letters as the ASCII username it reads as, the one sign-in reads', async () => {
    const username = name('wide');
    const r = run('user', 'create', '--username', fullWidth(username), '--password', 'long enough pw', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.username, username);
    assert.equal((await stores.users.findByUsername(username))?.username, username);
  });

  test('a command that names a member reads a username typed in full-width letters as user create and sign-in read it', () => {
    const username = name('widen');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const r = run('user', 'set-status', '--username', fullWidth(username), '--status', 'suspended', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { id: user.id, status: 'suspended' });
  });

  test('a duplicate username, in any letter case, is a bad argument', () => {
    const username = name('dup');
    assert.equal(run('user', 'create', '--username', username, '--password', 'long enough pw').code, 0);
    assertBadArguments(run('user', 'create', '--username', username.toUpperCase(), '--password', 'long enough pw', '--json'), /taken/);
  });

  test('user set-status changes the status; an unknown status or user is a bad argument', () => {
    const username = name('sue');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const r = run('user', 'set-status', '--username', username, '--status', 'suspended', '--json');
    assert.deepEqual(r.json, { id: user.id, status: 'suspended' });
    assertBadArguments(run('user', 'set-status', '--username', username, '--status', 'frozen', '--json'), /unknown status "frozen"/);
    assertBadArguments(run('user', 'set-status', '--username', name('ghost'), '--status', 'active', '--json'), /unknown user/);
  });

  test('token create and client create --owner refuse an account that is not active: one line, exit 2, nothing made (INTERFACE section 4)', async () => {
    const username = name('sus');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    run('user', 'set-status', '--username', username, '--status', 'suspended', '--json');
    assertBadArguments(run('token', 'create', '--username', username, '--name', 't1', '--scopes', 'profile:read', '--json'),
      new RegExp(`^svc: account "${username}" is suspended; only an active account can have a personal token\n$`));
    assertBadArguments(run('client', 'create', '--name', 'App', '--type', 'public', '--redirect-uri', 'https://app.example/cb', '--owner', username, '--json'),
      new RegExp(`^svc: account "${username}" is suspended; only an active account can own a new app\n$`));
    assert.deepEqual(await stores.personalTokens.listForUser(user.id), []);
    assert.deepEqual(await stores.clients.listByOwner(user.id), []);
  });

  test('client create prints id, secret once for a confidential client, type and redirect URIs', () => {
    const owner = name('own');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const r = run('client', 'create', '--name', 'App', '--type', 'confidential', '--redirect-uri', 'https://app.example/cb',
      '--redirect-uri', 'http://127.0.0.1/cb', '--owner', owner, '--homepage', 'https://app.example', '--id-token-alg', 'ES256', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['client_id', 'client_secret', 'type', 'redirect_uris', 'owner']);
    assert.equal(tokenKind(r.json.client_secret), 'clientSecret');
    assert.deepEqual(r.json.redirect_uris, ['https://app.example/cb', 'http://127.0.0.1/cb']);
    assert.equal(r.json.owner, owner);
    const pub = run('client', 'create', '--name', 'Mobile', '--type', 'public', '--redirect-uri', 'http://127.0.0.1/cb', '--json');
    assert.deepEqual(Object.keys(pub.json), ['client_id', 'type', 'redirect_uris']);
  });

  test('client create --owner names the owner in its answer, as the account spells its username, with the other fields it set', () => {
    const owner = name('Own');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const r = run('client', 'create', '--name', 'Owned', '--type', 'public', '--redirect-uri', 'https://app.example/cb', '--owner', owner.toLowerCase());
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^type: +public$/m);
    assert.match(r.stdout, new RegExp(`^owner: +${owner}$`, 'm'));
    const unowned = run('client', 'create', '--name', 'Unowned', '--type', 'public', '--redirect-uri', 'https://app.example/cb');
    assert.equal(unowned.code, 0, unowned.stderr);
    assert.doesNotMatch(unowned.stdout, /owner/);
  });

  test('client create takes post-logout redirect URIs and a back-channel logout URI, and prints them', () => {
    const r = run('client', 'create', '--name', 'Logout', '--type', 'confidential', '--redirect-uri', 'https://app.example/cb',
      '--post-logout-redirect-uri', 'https://app.example/bye', '--post-logout-redirect-uri', 'http://127.0.0.1/bye',
      '--backchannel-logout-uri', 'https://app.example/backchannel', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['client_id', 'client_secret', 'type', 'redirect_uris', 'post_logout_redirect_uris', 'backchannel_logout_uri']);
    assert.deepEqual(r.json.post_logout_redirect_uris, ['https://app.example/bye', 'http://127.0.0.1/bye']);
    assert.equal(r.json.backchannel_logout_uri, 'https://app.example/backchannel');
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb',
      '--post-logout-redirect-uri', 'http://evil.example/bye', '--json'), /post-logout redirect URI/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb',
      '--backchannel-logout-uri', 'https://a.example/bc#x', '--json'), /back-channel logout URI .* fragment/);
  });

  test('a malformed redirect URI, unknown type or unknown owner is a bad argument', () => {
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'http://evil.example/cb', '--json'), /redirect URI/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb#frag', '--json'), /fragment/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'secret', '--redirect-uri', 'https://a.example/cb', '--json'), /unknown type/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb', '--owner', name('nobody'), '--json'), /unknown user/);
  });

  test('a refusal quoting what was typed is one line on stderr: an escape sequence, a newline or a direction override in it is written escaped', () => {
    const refused = run('client', 'create', '--name', 'A', '--type', 'pub\x1b[2J\x1b[31mlic\nsvc: ok \u202e', '--redirect-uri', 'https://a.example/cb', '--json');
    assertBadArguments(refused, /unknown type "pub\\u\{1b\}\[2J\\u\{1b\}\[31mlic\\u\{a\}svc: ok \\u\{202e\}"/);
    assert.doesNotMatch(refused.stderr, /[\x1b\u202e]/);
  });

  test('client create refuses an address with its scheme in capitals or its scheme\'s default port, which a browser leaves out, saying how to write it', () => {
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example:443/cb', '--json'),
      /redirect URI "https:\/\/a\.example:443\/cb" writes the default port 443 of https, .*: write it as "https:\/\/a\.example\/cb"$/m);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb',
      '--post-logout-redirect-uri', 'HTTP://127.0.0.1/bye', '--json'), /post-logout redirect URI .* writes its scheme in capital letters, .*: write it as "http:\/\/127\.0\.0\.1\/bye"$/m);
  });

  test('client create --require-par and client require-par [--off] set whether its authorization requests must be pushed', async () => {
    // The command is another connection: on SQLite a remembered client row sees its commit from
    // the next turn of the event loop, as a server's next request would (docs/performance.md, decisions 8 and 38).
    const stored = async (clientId: string) => {
      await new Promise((resolve) => setImmediate(resolve));
      return (await stores.clients.findById(clientId))?.requirePushedAuthorizationRequests;
    };
    const created = run('client', 'create', '--name', 'Pushed', '--type', 'public', '--redirect-uri', 'https://a.example/cb', '--require-par', '--json');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json.require_pushed_authorization_requests, true);
    assert.equal(await stored(created.json.client_id), true);
    const off = run('client', 'require-par', '--client-id', created.json.client_id, '--off', '--json');
    assert.deepEqual(off.json, { client_id: created.json.client_id, require_pushed_authorization_requests: false });
    assert.equal(await stored(created.json.client_id), false);
    assert.equal(run('client', 'require-par', '--client-id', created.json.client_id, '--json').json.require_pushed_authorization_requests, true);
    assert.equal(await stored(created.json.client_id), true);
    assertBadArguments(run('client', 'require-par', '--client-id', 'nope', '--json'), /unknown client/);
  });

  test('client rotate-secret prints a new secret; deactivate prints the status', () => {
    const { json: client } = run('client', 'create', '--name', 'A', '--type', 'confidential', '--redirect-uri', 'https://a.example/cb', '--json');
    const r = run('client', 'rotate-secret', '--client-id', client.client_id, '--json');
    assert.equal(r.json.client_id, client.client_id);
    assert.notEqual(r.json.client_secret, client.client_secret);
    assert.deepEqual(run('client', 'deactivate', '--client-id', client.client_id, '--json').json, { client_id: client.client_id, status: 'deactivated' });
    assertBadArguments(run('client', 'rotate-secret', '--client-id', 'nope', '--json'), /unknown client/);
  });

  test('a new secret is printed though its audit line cannot be written (standard error on a full disk), and it is the one the app has', async () => {
    const owner = name('full');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const full = (...args: string[]) => svcWithStderrAt('/dev/full', database.url, args);
    const created = full('client', 'create', '--name', 'F', '--type', 'confidential', '--redirect-uri', 'https://f.example/cb', '--json');
    assert.equal(created.code, 0);
    assert.equal((await stores.clients.findById(created.json.client_id))?.secretHash, hashSecret(created.json.client_secret));
    const rotated = full('client', 'rotate-secret', '--client-id', created.json.client_id, '--json');
    assert.equal(rotated.code, 0);
    assert.equal((await stores.clients.findById(created.json.client_id))?.secretHash, hashSecret(rotated.json.client_secret));
    const token = full('token', 'create', '--username', owner, '--name', 'f', '--scopes', 'profile:read', '--json');
    assert.equal(token.code, 0);
    assert.ok(await stores.personalTokens.findBearer(hashSecret(token.json.token)));
  });

  /** An account with a verified address (so a change to its app mails it a notice) and a confidential app it owns. */
  async function ownerWithApp(prefix: string): Promise<{ userId: number; clientId: string; secret: string }> {
    const owner = name(prefix);
    const { json: user } = run('user', 'create', '--username', owner, '--password', 'long enough pw', '--json');
    const address = `${owner}@example.test`;
    await stores.memberEmails.set(user.id, address, 'en', Date.now());
    assert.ok(await stores.memberEmails.markVerified(user.id, address, Date.now()));
    const { json: client } = run('client', 'create', '--name', 'Owned App', '--type', 'confidential', '--redirect-uri', 'https://owned.example/cb', '--owner', owner, '--json');
    return { userId: user.id, clientId: client.client_id, secret: client.client_secret };
  }
  const rotationsLogged = async (userId: number) => (await stores.securityEvents.listForUser(userId, 0, 10)).items.filter((e) => e.kind === 'client_secret.rotated');
  /** `svc` with mail on: a notice is queued in the outbox; nothing delivers it. */
  const runWithMail = (...args: string[]) => svc(database.url, args, { SMTP_URL: 'smtp://127.0.0.1:9' });
  const noticesTo = (userId: number) => handle.db.selectFrom('mail_outbox').select(['kind', 'body_text']).where('user_id', '=', userId).execute();

  test('client rotate-secret writes client_secret.rotated to the owner\'s security log, as the site\'s rotation does, from the site\'s staff', async () => {
    const { userId, clientId } = await ownerWithApp('told');
    const rotated = run('client', 'rotate-secret', '--client-id', clientId, '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    const logged = await rotationsLogged(userId);
    assert.deepEqual(logged.map((e) => ({ detail: e.detail, address: e.address, device: e.device })),
      [{ detail: { app: 'Owned App', client_id: clientId }, address: '', device: 'the site\'s staff' }]);
  });

  test('user set-role writes the member\'s security log a line from the site\'s staff with the new role, never who or why', async () => {
    const username = name('told');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    assert.equal(run('user', 'set-role', '--username', username, '--role', 'moderator', '--reason', 'secret reason', '--json').code, 0);
    const { items } = await stores.securityEvents.listForUser(user.id, 0, 10);
    assert.deepEqual(items.map((e) => [e.kind, e.detail, e.address, e.device]), [['staff.role_changed', { role: 'moderator' }, '', 'the site\'s staff']]);
  });

  test('client rotate-secret whose owner\'s security-log line cannot be written changes nothing: no secret printed, the app keeps its own', async () => {
    const { userId, clientId, secret } = await ownerWithApp('lost');
    const refused = await whileInsertsFail(handle.db, database, 'security_events', async () => run('client', 'rotate-secret', '--client-id', clientId, '--json'));
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stdout, '', 'no secret printed');
    const client = await stores.clients.findById(clientId);
    assert.equal(client?.secretHash, hashSecret(secret), 'the secret its owner holds is still the app\'s');
    assert.equal(client?.previousSecret, null, 'and no rotation put it aside');
    assert.deepEqual(await rotationsLogged(userId), []);
  });

  test('client rotate-secret mails the owner a notice saying the site\'s staff made it (words of its own: attack82)', async () => {
    const { userId, clientId } = await ownerWithApp('mail');
    const rotated = runWithMail('client', 'rotate-secret', '--client-id', clientId, '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    const notices = await noticesTo(userId);
    assert.deepEqual(notices.map((n) => n.kind), ['noticeClientSecretRotatedByStaff']);
    assert.match(notices[0]!.body_text, /The site's staff made a new client secret for your application “Owned App” at /);
  });

  test('client rotate-secret prints the new secret, the app\'s, though its owner\'s notice cannot be queued, and says so on standard error', async () => {
    const { userId, clientId, secret } = await ownerWithApp('unmailed');
    const rotated = await whileInsertsFail(handle.db, database, 'mail_outbox', async () => runWithMail('client', 'rotate-secret', '--client-id', clientId, '--json'));
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual(rotated.json.client_secret, secret);
    assert.equal((await stores.clients.findById(clientId))?.secretHash, hashSecret(rotated.json.client_secret), 'the one printed is the app\'s');
    assert.equal((await rotationsLogged(userId)).length, 1, 'the owner\'s log tells of it');
    assert.deepEqual(await noticesTo(userId), []);
    assert.match(rotated.stderr, /^svc: the owner's notice mail could not be queued: .*refused by the test/m);
  });

  /** An account with a verified address, so a token made for it mails it a notice. */
  async function memberWithAddress(prefix: string): Promise<{ userId: number; username: string }> {
    const username = name(prefix);
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const address = `${username}@example.test`;
    await stores.memberEmails.set(user.id, address, 'en', Date.now());
    assert.ok(await stores.memberEmails.markVerified(user.id, address, Date.now()));
    return { userId: user.id, username };
  }
  const tokensLogged = async (userId: number) => (await stores.securityEvents.listForUser(userId, 0, 10)).items.filter((e) => e.kind === 'personal_token.created');

  test(`token create obeys the member's cap of ${MAX_PERSONAL_TOKENS} live personal tokens, as the tokens page does: one line, exit 2, nothing made`, async () => {
    const username = name('full');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    // Made two days ago: only the live cap judges them, not the day's limit.
    for (let i = 0; i < MAX_PERSONAL_TOKENS; i++) {
      await stores.personalTokens.insert({ userId: user.id, name: `t${i}`, tokenHash: hashSecret(generateOpaqueId()), scope: 'profile:read', expiresAt: null }, Date.now() - days(2));
    }
    assertBadArguments(run('token', 'create', '--username', username, '--name', 'one more', '--scopes', 'profile:read', '--json'),
      new RegExp(`^svc: you have ${MAX_PERSONAL_TOKENS} live tokens, the most an account can have; revoke one before creating another\n$`));
    assert.equal((await stores.personalTokens.listForUser(user.id)).length, MAX_PERSONAL_TOKENS);
  });

  test(`token create obeys the member's limit of ${PERSONAL_TOKENS_PER_DAY} tokens created in 24 hours, revoked ones included, as the tokens page does: one line saying when in UTC, exit 2, nothing made`, async () => {
    const username = name('busy');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const madeAt = Date.now() - 60_000;
    for (let i = 0; i < PERSONAL_TOKENS_PER_DAY; i++) {
      const token = await stores.personalTokens.insert({ userId: user.id, name: `t${i}`, tokenHash: hashSecret(generateOpaqueId()), scope: 'profile:read', expiresAt: null }, madeAt);
      await stores.personalTokens.revoke(token.id, user.id, madeAt);
    }
    const again = formatUtc(Math.ceil((madeAt + days(1)) / 1000) * 1000);
    assertBadArguments(run('token', 'create', '--username', username, '--name', 'one more', '--scopes', 'profile:read', '--json'),
      new RegExp(`^svc: you have created ${PERSONAL_TOKENS_PER_DAY} tokens in the last 24 hours, the most an account can create in a day; try again after ${again}\n$`));
    assert.equal((await stores.personalTokens.listForUser(user.id)).length, PERSONAL_TOKENS_PER_DAY);
  });

  test('token create writes personal_token.created to the member\'s security log, as the member\'s own token does, from the site\'s staff', async () => {
    const { userId, username } = await memberWithAddress('tokd');
    const made = run('token', 'create', '--username', username, '--name', 'made for you', '--scopes', 'profile:read', '--json');
    assert.equal(made.code, 0, made.stderr);
    assert.deepEqual((await tokensLogged(userId)).map((e) => ({ detail: e.detail, address: e.address, device: e.device })),
      [{ detail: { name: 'made for you', scope: 'profile:read' }, address: '', device: 'the site\'s staff' }]);
  });

  test('token create whose member\'s security-log line cannot be written makes no token and prints none', async () => {
    const { userId, username } = await memberWithAddress('tokl');
    const refused = await whileInsertsFail(handle.db, database, 'security_events', async () => run('token', 'create', '--username', username, '--name', 'n', '--scopes', 'profile:read', '--json'));
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stdout, '', 'no token printed');
    assert.deepEqual(await stores.personalTokens.listForUser(userId), []);
  });

  test('token create mails the member a notice saying the site\'s staff made the token and kept it, and where to revoke it', async () => {
    const { userId, username } = await memberWithAddress('tokm');
    const made = runWithMail('token', 'create', '--username', username, '--name', 'made for you', '--scopes', 'profile:read', '--json');
    assert.equal(made.code, 0, made.stderr);
    const notices = await noticesTo(userId);
    // Words of its own: the member's own notice asks them to change their password if it was not them.
    assert.deepEqual(notices.map((n) => n.kind), ['noticePersonalTokenCreatedByStaff']);
    assert.match(notices[0]!.body_text, /The site's staff created the personal API token “made for you” for your account at .*, and kept it/);
    assert.match(notices[0]!.body_text, /revoke it on your tokens page: http:\/\/localhost:3000\/settings\/tokens/);
    assert.doesNotMatch(notices[0]!.body_text, /change your password/);
  });

  test('token create prints the token, a working one, though the member\'s notice cannot be queued, and says so on standard error', async () => {
    const { userId, username } = await memberWithAddress('toku');
    const made = await whileInsertsFail(handle.db, database, 'mail_outbox', async () => runWithMail('token', 'create', '--username', username, '--name', 'n', '--scopes', 'profile:read', '--json'));
    assert.equal(made.code, 0, made.stderr);
    assert.ok(await stores.personalTokens.findBearer(hashSecret(made.json.token)), 'the token printed is stored');
    assert.equal((await tokensLogged(userId)).length, 1, 'the member\'s log tells of it');
    assert.deepEqual(await noticesTo(userId), []);
    assert.match(made.stderr, /^svc: the member's notice mail could not be queued: .*refused by the test/m);
  });

  test('post create prints the id and the absolute post URL; drafts too', () => {
    const author = name('pat');
    run('user', 'create', '--username', author, '--password', 'long enough pw');
    const r = run('post', 'create', '--username', author, '--title', 'Hello', '--category', 'News', '--body', 'Body', '--likes', '3', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { id: r.json.id, url: `http://localhost:3000/posts/${r.json.id}` });
    assert.equal(run('post', 'create', '--username', author, '--title', 'D', '--category', 'News', '--body', 'B', '--draft', '--json').code, 0);
    assertBadArguments(run('post', 'create', '--username', author, '--title', 'T', '--category', 'C', '--body', 'B', '--likes', 'many', '--json'), /--likes/);
  });

  test('token create prints a personal token and its expiry in UTC with Z, or null', () => {
    const owner = name('tok');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const r = run('token', 'create', '--username', owner, '--name', 'ci', '--scopes', 'profile:read posts:read', '--expires-in-days', '30', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(tokenKind(r.json.token), 'personal');
    assert.match(r.json.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(run('token', 'create', '--username', owner, '--name', 'x', '--scopes', 'profile:read', '--expires-in-days', 'none', '--json').json.expires_at, null);
    assertBadArguments(run('token', 'create', '--username', owner, '--name', 'x', '--scopes', 'openid', '--json'), /scope/);
  });

  test('keys rotate prints the new kid; janitor prints deleted counts; demo seeds once', () => {
    assert.match(run('keys', 'rotate', '--json').json.kid, /^[A-Za-z0-9_-]{43}$/);
    const janitor = run('janitor', '--json');
    assert.equal(typeof janitor.json.deleted.access_tokens, 'number');
    const seeded = run('demo', '--json').json;
    assert.equal(seeded.seeded, true);
    assert.ok(existsSync(seeded.credentials_file), 'the file it names holds the demo\'s sign-in');
    assert.deepEqual(run('demo', '--json').json, { ...seeded, seeded: false });
    assert.match(run('demo').stdout, /a user named demo is already there: nothing seeded/);
  });

  test('a KEYS_SECRET that does not fit the stored keys is a bad setting: one line, exit 2', () => {
    assert.equal(run('keys', 'rotate', '--json').code, 0);
    // The keys above are stored unsealed: rotating with a KEYS_SECRET would seal only the new one.
    assertBadArguments(svc(database.url, ['keys', 'rotate', '--json'], { KEYS_SECRET: 'a-secret-of-at-least-32-characters-long' }), /KEYS_SECRET/);
  });

  test('an unknown command or option, or a missing option, is a bad argument', () => {
    assertBadArguments(run('user', 'explode', '--json'), /unknown command/);
    assertBadArguments(run('user', 'create', '--username', 'x', '--colour', 'red', '--json'), /colour/);
    assertBadArguments(run('user', 'create', '--username', name('x'), '--json'), /--password-stdin/);
  });

  test('a password comes from standard input with --password-stdin, its first line only', async () => {
    const username = name('inp');
    const r = runWith('a password from a pipe\nignored second line\n', 'user', 'create', '--username', username, '--password-stdin', '--json');
    assert.equal(r.code, 0, r.stderr);
    const stored = await stores.users.findCredentials(username);
    assert.equal(await verifyPassword(stored!.passwordHash, 'a password from a pipe'), true);
    assertBadArguments(runWith('', 'user', 'create', '--username', name('emp'), '--password-stdin', '--json'), /held no password/);
    assertBadArguments(runWith('x y z w v u', 'user', 'create', '--username', name('two'), '--password-stdin', '--password', 'p', '--json'), /either/);
  });

  test('on a terminal the password is asked twice and never echoed', async () => {
    const username = name('tty');
    const password = `typed ${randomBytes(6).toString('hex')}`;
    const typed = await svcAtTerminal(database.url, ['user', 'create', '--username', username, '--json'], [
      { prompt: /Password for \w+: /, type: `${password}\r` },
      { prompt: /The same password again: /, type: `${password}\r` },
    ]);
    assert.equal(typed.code, 0, typed.screen);
    assert.ok(!typed.screen.includes(password), `the terminal showed the password: ${typed.screen}`);
    assert.match(typed.screen, new RegExp(`\\{"id":\\d+,"username":"${username}"\\}`));
    assert.equal(await verifyPassword((await stores.users.findCredentials(username))!.passwordHash, password), true);

    const differ = await svcAtTerminal(database.url, ['user', 'create', '--username', name('tty'), '--json'], [
      { prompt: /Password for \w+: /, type: 'first password\r' },
      { prompt: /The same password again: /, type: 'second password\r' },
    ]);
    assert.equal(differ.code, 2);
    assert.match(differ.screen, /the two passwords differ/);
  });

  test('user set-password follows the password rules, ends every session, and keeps tokens', async () => {
    const username = name('pwd');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'the first password', '--json');
    const now = Date.now();
    for (let i = 0; i < 2; i++) {
      await stores.sessions.create({ idHash: hashSecret(generateOpaqueId()), userId: user.id, authTime: now, expiresAt: now + 3_600_000 }, now);
    }
    const { json: token } = run('token', 'create', '--username', username, '--name', 'ci', '--scopes', 'profile:read', '--json');
    assertBadArguments(runWith('short\n', 'user', 'set-password', '--username', username, '--password-stdin', '--json'), /8 to 256/);
    assertBadArguments(runWith(`${username}\n`, 'user', 'set-password', '--username', username, '--password-stdin', '--json'), /username/);
    assertBadArguments(runWith('a fine password\n', 'user', 'set-password', '--username', name('ghost'), '--password-stdin', '--json'), /unknown user/);
    const r = runWith('the second password\n', 'user', 'set-password', '--username', username.toUpperCase(), '--password-stdin', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { id: user.id, sessions_ended: 2 });
    const stored = await stores.users.findCredentials(username);
    assert.equal(await verifyPassword(stored!.passwordHash, 'the second password'), true);
    assert.equal(await verifyPassword(stored!.passwordHash, 'the first password'), false);
    assert.equal((await stores.personalTokens.findBearer(hashSecret(token.token)))?.revokedAt, null, 'personal tokens keep working');
    assert.deepEqual(auditLines(r).map((line) => [line.audit, line.userId, line.sessionsEnded]), [['account.password_changed', user.id, 2]]);
  });

  test('user list pages by id, filters by status, and says where the next page starts', () => {
    const made = [name('la'), name('lb'), name('lc')].map((username) => run('user', 'create', '--username', username, '--password', 'long enough pw', '--json').json);
    run('user', 'set-status', '--username', made[1].username, '--status', 'banned', '--json');
    const first = run('user', 'list', '--after', String(made[0].id - 1), '--limit', '2', '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(Object.keys(first.json), ['users', 'next_after']);
    assert.deepEqual(first.json.users.map((u: { id: number }) => u.id), [made[0].id, made[1].id]);
    assert.deepEqual(Object.keys(first.json.users[0]), ['id', 'username', 'status', 'member', 'level', 'xp', 'created_at']);
    assert.match(first.json.users[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(first.json.next_after, made[1].id);
    const rest = run('user', 'list', '--after', String(first.json.next_after), '--json');
    assert.equal(rest.json.users[0].id, made[2].id);
    assert.equal(rest.json.next_after, null);
    const banned = run('user', 'list', '--status', 'banned', '--json').json.users.map((u: { username: string }) => u.username);
    assert.ok(banned.includes(made[1].username) && !banned.includes(made[0].username));
    assertBadArguments(run('user', 'list', '--status', 'frozen', '--json'), /unknown status/);
    assertBadArguments(run('user', 'list', '--limit', '0', '--json'), /--limit/);
  });

  test('client list shows every client without a secret, or one owner\'s', () => {
    const owner = name('cow');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const { json: mine } = run('client', 'create', '--name', 'Owned', '--type', 'confidential', '--redirect-uri', 'https://o.example/cb', '--owner', owner, '--json');
    const { json: other } = run('client', 'create', '--name', 'Unowned', '--type', 'public', '--redirect-uri', 'http://127.0.0.1/cb', '--json');
    const all = run('client', 'list', '--json');
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout, /svcs_|secret/);
    const listed = all.json.clients.find((c: { client_id: string }) => c.client_id === mine.client_id);
    assert.deepEqual(Object.keys(listed), ['client_id', 'name', 'type', 'status', 'owner', 'redirect_uris', 'created_at']);
    assert.deepEqual({ ...listed, created_at: undefined }, {
      client_id: mine.client_id, name: 'Owned', type: 'confidential', status: 'active', owner, redirect_uris: ['https://o.example/cb'], created_at: undefined,
    });
    assert.equal(all.json.clients.find((c: { client_id: string }) => c.client_id === other.client_id).owner, null);
    assert.deepEqual(run('client', 'list', '--owner', owner, '--json').json.clients.map((c: { client_id: string }) => c.client_id), [mine.client_id]);
    assertBadArguments(run('client', 'list', '--owner', name('nobody'), '--json'), /unknown user/);
  });

  test('token list shows an account\'s personal tokens without the token; token revoke ends one', () => {
    const owner = name('tls');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const { json: created } = run('token', 'create', '--username', owner, '--name', 'deploy', '--scopes', 'posts:read', '--expires-in-days', 'none', '--json');
    const listed = run('token', 'list', '--username', owner, '--json');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!listed.stdout.includes(created.token));
    assert.equal(listed.json.tokens.length, 1);
    const [token] = listed.json.tokens;
    assert.deepEqual(Object.keys(token), ['id', 'name', 'scope', 'status', 'created_at', 'expires_at', 'last_used_at']);
    assert.deepEqual({ ...token, id: 0, created_at: '' }, { id: 0, name: 'deploy', scope: 'posts:read', status: 'active', created_at: '', expires_at: null, last_used_at: null });
    const revoked = run('token', 'revoke', '--username', owner, '--id', String(token.id), '--json');
    assert.deepEqual(revoked.json, { id: token.id, status: 'revoked' });
    assert.equal(run('token', 'list', '--username', owner, '--json').json.tokens[0].status, 'revoked');
    assertBadArguments(run('token', 'revoke', '--username', owner, '--id', String(token.id), '--json'), /no live personal token/);
    assert.deepEqual(run('token', 'list', '--username', name('nobody'), '--json').code, 2);
  });

  test('a deactivated client is deactivated once: again is the same answer and no second audit event; it gets no new secret', () => {
    const { json: client } = run('client', 'create', '--name', 'Old', '--type', 'confidential', '--redirect-uri', 'https://old.example/cb', '--json');
    const first = run('client', 'deactivate', '--client-id', client.client_id, '--json');
    const again = run('client', 'deactivate', '--client-id', client.client_id, '--json');
    assert.deepEqual(again.json, first.json);
    assert.deepEqual([first, again].flatMap(auditLines).map((e) => e.audit), ['staff.action', 'client.deactivated']);
    assertBadArguments(run('client', 'rotate-secret', '--client-id', client.client_id, '--json'),
      new RegExp(`^svc: client "${client.client_id}" is deactivated; a deactivated client gets no new secret\\n$`));
  });

  test('a deactivated client\'s pushed-request setting stays as it is: client require-par is a bad argument and writes nothing', async () => {
    const { json: client } = run('client', 'create', '--name', 'Parked', '--type', 'public', '--redirect-uri', 'https://parked.example/cb', '--json');
    assert.equal(run('client', 'deactivate', '--client-id', client.client_id, '--json').code, 0);
    assertBadArguments(run('client', 'require-par', '--client-id', client.client_id, '--json'),
      new RegExp(`^svc: client "${client.client_id}" is deactivated; a deactivated client keeps its settings\\n$`));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await stores.clients.findById(client.client_id))?.requirePushedAuthorizationRequests, false);
  });

  test('what a command changes is an audit line on stderr, with ids and no secret; stdout stays one JSON object', () => {
    const username = name('aud');
    const created = runWith('an audited password\n', 'user', 'create', '--username', username, '--password-stdin', '--json');
    const client = run('client', 'create', '--name', 'Audited', '--type', 'confidential', '--redirect-uri', 'https://a.example/cb', '--owner', username, '--json');
    const rotated = run('client', 'rotate-secret', '--client-id', client.json.client_id, '--json');
    const token = run('token', 'create', '--username', username, '--name', 'x', '--scopes', 'profile:read', '--json');
    const results = [
      created, client, rotated, token,
      run('client', 'deactivate', '--client-id', client.json.client_id, '--json'),
      run('user', 'set-status', '--username', username, '--status', 'suspended', '--json'),
      run('keys', 'rotate', '--json'),
    ];
    const events = results.flatMap((r) => {
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotThrow(() => JSON.parse(r.stdout), 'one JSON object on stdout');
      return auditLines(r);
    });
    assert.deepEqual(events.map((e) => e.audit), [
      'account.created', 'client.registered', 'staff.action', 'client.secret_rotated', 'staff.action', 'personal_token.created',
      'staff.action', 'client.deactivated', 'staff.action', 'account.status_changed', 'staff.action', 'signing_keys.rotated',
    ]);
    for (const event of events) {
      assert.equal(event.via, 'cli');
      assert.ok(AUDIT_EVENTS.includes(event.audit as never));
    }
    assert.equal(events[1]!.clientId, client.json.client_id);
    const everything = results.map((r) => r.stderr).join('');
    for (const secret of ['an audited password', client.json.client_secret, rotated.json.client_secret, token.json.token]) {
      assert.ok(!everything.includes(secret), 'no secret in the audit lines');
    }
  });

  test('bad arguments change nothing', () => {
    const username = name('none');
    assertBadArguments(run('user', 'create', '--username', username, '--password', 'short', '--json'), /password/);
    assertBadArguments(run('post', 'create', '--username', username, '--title', 'T', '--category', 'C', '--body', 'B', '--json'), /unknown user/);
  });
});

test('a bad setting makes the command line stop with one line naming it', () => {
  const r = svc('mysql://nope', ['migrate', '--json']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /DATABASE_URL/);
  assert.equal(r.stdout, '');
});

test('a bad setting\'s value is quoted as the server quotes it: its invisible characters and backslashes escaped once', () => {
  const r = svc(`sqlite:${temporarySqlitePath()}`, ['migrate'], { PORT: HOSTILE_PORT });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `svc: invalid setting PORT=${HOSTILE_PORT_SHOWN}: accepts an integer from 0 to 65535\n`);
});

test('svc --help lists every command and exits 0; a command\'s --help shows its options', () => {
  const path = temporarySqlitePath();
  const url = `sqlite:${path}`;
  const overview = svc(url, ['--help']);
  assert.equal(overview.code, 0);
  assert.equal(overview.stderr, '');
  for (const command of ['user create', 'user list', 'user set-status', 'user set-password', 'client create', 'client list',
    'client rotate-secret', 'client deactivate', 'post create', 'token create', 'token list', 'token revoke', 'keys rotate',
    'migrate', 'demo', 'janitor', 'user set-role', 'staff-log']) {
    assert.match(overview.stdout, new RegExp(`^  ${command} `, 'm'));
    const help = svc(url, [...command.split(' '), '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^usage: svc ${command}`));
    assert.match(help.stdout, /--json +print one JSON object/);
  }
  assert.match(svc(url, ['user', 'create', '--help']).stdout, /--password P +the password itself: other users of this machine can read it/);
  assert.equal(svc(url, ['help']).stdout, overview.stdout);
  const json = svc(url, ['user', 'set-password', '--help', '--json']);
  assert.equal(json.json.name, 'user set-password');
  assert.equal(typeof json.json.options['--password-stdin'], 'string');
  assert.deepEqual(svc(url, ['--help', '--json']).json.commands.length, 19);
  assert.match(svc(url, ['token', '--help']).stdout, /token create[\s\S]*token list[\s\S]*token revoke/);
  // Help touches no database.
  assert.equal(existsSync(path), false);
});

test('no command, a noun alone or an unknown command is a bad argument: one line, exit 2', () => {
  const url = `sqlite:${temporarySqlitePath()}`;
  assertBadArguments(svc(url, []), /no command given \(svc --help lists them\)/);
  assertBadArguments(svc(url, ['user']), /"user" needs one of: user create, user list/);
  assertBadArguments(svc(url, ['frobnicate', '--json']), /unknown command "frobnicate"/);
  assertBadArguments(svc(url, ['frobnicate', '--help']), /unknown command/);
});

test('an option of one value given twice is a bad argument, not the last one taken without a word', () => {
  const path = temporarySqlitePath();
  assertBadArguments(svc(`sqlite:${path}`, ['user', 'create', '--username', 'carol', '--password', 'long enough pw', '--username', 'dave', '--json']),
    /^svc: --username is given twice; give it once \(svc user create --help\)\n$/);
  assert.equal(existsSync(path), false, 'nothing was made');
});

test('a value that starts with "-" is told how to write it, not called ambiguous', () => {
  const url = `sqlite:${temporarySqlitePath()}`;
  assertBadArguments(svc(url, ['user', 'create', '--username', 'carol', '--password', 'long enough pw', '--level', '-1', '--json']),
    /^svc: --level is followed by "-1", which is read as an option; if it is the value, write --level=-1 \(svc user create --help\)\n$/);
  assertBadArguments(svc(url, ['user', 'create', '--username', 'carol', '--password', 'long enough pw', '--level=-1', '--json']),
    /^svc: --level must be a whole number from 0 to 2147483647\n$/);
});

test('a number past what its column holds is refused as a usage error, before it reaches the database', () => {
  const url = `sqlite:${temporarySqlitePath()}`;
  assertBadArguments(svc(url, ['user', 'create', '--username', 'carol', '--password', 'long enough pw', '--level=2147483648', '--json']),
    /^svc: --level must be a whole number from 0 to 2147483647\n$/);
  assertBadArguments(svc(url, ['user', 'list', '--after=2147483648', '--json']), /^svc: --after must be a whole number from 0 to 2147483647\n$/);
  assertBadArguments(svc(url, ['user', 'create', '--username', 'carol', '--password', 'long enough pw', '--xp=1000000000000000', '--json']),
    /^svc: --xp must be a whole number from 0 to 999999999999999\n$/);
});

test('npm run --silent svc prints the command\'s JSON and nothing else', () => {
  const url = `sqlite:${temporarySqlitePath()}`;
  const result = spawnSync('npm', ['run', '--silent', 'svc', '--', 'user', 'list', '--json'], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: url },
  });
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { users: [], next_after: null });
});
