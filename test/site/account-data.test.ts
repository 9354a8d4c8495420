/**
 * Downloading one's data (GDPR Art. 15 and 20; docs/site.md, "Downloading your data") over real
 * HTTP on each database: asked with the password, or a code in its place, counted as a sign-in is;
 * a JSON file of everything the member gave or did, times in UTC, and no secret or hash of one.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, request } from 'node:http';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { deleteAccount } from '../../src/core/accounts/account-deletion.js';
import { setAccountStatus } from '../../src/core/accounts/accounts.js';
import { DATA_DOWNLOADS_AT_ONCE, DATA_DOWNLOADS_WAITING, DATA_PAGE, dataDownloadQueue } from '../../src/core/accounts/data-export.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { PostStore } from '../../src/core/community/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import type { AuditEvent } from '../../src/core/audit.js';
import { SIGN_IN_FAILURES_PER_DEVICE } from '../../src/core/accounts/sign-in.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { formatUtc } from '../../src/core/time.js';
import type { Database } from '../../src/storage/schema.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase, whileInsertsFail } from '../support/databases.js';
import { type PageResponse, Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

/**
 * Every stored column that holds a secret or a hash of one, by the column that names its member:
 * a value of any of them in the file fails the test.
 */
const SECRET_COLUMNS: ReadonlyArray<{ table: keyof Database; owner: string; columns: readonly string[] }> = [
  { table: 'users', owner: 'id', columns: ['password_hash'] },
  { table: 'sessions', owner: 'user_id', columns: ['id_hash'] },
  { table: 'personal_tokens', owner: 'user_id', columns: ['token_hash'] },
  { table: 'access_tokens', owner: 'user_id', columns: ['token_hash'] },
  { table: 'refresh_tokens', owner: 'user_id', columns: ['token_hash', 'successor_hash', 'replay_sealed'] },
  { table: 'authorization_codes', owner: 'user_id', columns: ['code_hash', 'code_challenge'] },
  { table: 'totp_credentials', owner: 'user_id', columns: ['secret'] },
  { table: 'recovery_codes', owner: 'user_id', columns: ['code_hash'] },
  { table: 'passkeys', owner: 'user_id', columns: ['public_key', 'credential_id'] },
  { table: 'webauthn_challenges', owner: 'user_id', columns: ['challenge'] },
  { table: 'pending_sign_ins', owner: 'user_id', columns: ['id_hash'] },
  { table: 'one_time_secrets', owner: 'user_id', columns: ['id_hash', 'sealed'] },
  { table: 'email_links', owner: 'user_id', columns: ['token_hash'] },
  { table: 'clients', owner: 'owner_id', columns: ['secret_hash', 'previous_secret_hash'] },
];

async function storedSecrets(db: Kysely<Database>, userId: number): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const { table, owner, columns } of SECRET_COLUMNS) {
    const rows = await (db as Kysely<any>).selectFrom(table).select(columns as string[]).where(owner, '=', userId).execute();
    for (const row of rows as Array<Record<string, unknown>>) {
      for (const column of columns) if (typeof row[column] === 'string' && row[column] !== '') found.set(row[column] as string, `${table}.${column}`);
    }
  }
  return found;
}

forEachDatabase('downloading one\'s data', (database) => {
  let t: TestApp;
  let counter = 0;
  const logLines: string[] = [];
  before(async () => { t = await startTestApp(database, { logLines }); });
  after(async () => t.close());

  const member = () => signedInMember(t, `exporting${++counter}`, PASSWORD);
  const download = (visitor: Visitor, fields: Record<string, string>) => visitor.post('/settings/account/data', fields);
  const dataOf = (response: PageResponse) => JSON.parse(response.text) as Record<string, any>;

  test('the data is downloaded only with the password, as deleting the account asks it: without it or with a wrong one, no file', async () => {
    const { visitor } = await member();
    const profile = await visitor.get('/settings/profile');
    assert.match(profile.text, /<form method="post" action="\/settings\/account\/data">[\s\S]*?name="_csrf"[\s\S]*?<input type="password" id="data-password" name="password"/);
    assert.doesNotMatch(profile.text, /id="data-code"/, 'no code field without two-step verification');
    for (const [fields, message] of [[{}, /Enter your password to download your data/], [{ password: 'not my password' }, /That password is not right/]] as const) {
      const refused = await download(visitor, fields);
      assert.equal(refused.status, 400);
      assert.match(refused.text, message);
      assert.match(refused.text, /id="data-password"[^>]*aria-invalid="true"/);
      assert.equal(refused.headers.get('content-disposition'), null, 'no file');
    }
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200, 'the right one gives the file');
  });

  test('the password asked for the data counts as a sign-in failure does: wrong ones end in a lock-out that refuses the right one too', async () => {
    const { user, visitor } = await member();
    let answer: PageResponse | undefined;
    for (let i = 0; i < 50 && answer?.status !== 429; i++) answer = await download(visitor, { password: `wrong ${i}` });
    assert.equal(answer?.status, 429, 'locked out');
    assert.match(answer!.headers.get('retry-after') ?? '', /^\d+$/);
    assert.match(answer!.text, /Too many wrong attempts/);
    assert.equal((await download(visitor, { password: PASSWORD })).status, 429, 'the right password waits too');
    assert.ok(t.audit.some((e) => e.audit === 'password_confirm.failed' && e.userId === user.id), 'each wrong one is an audit event');
  });

  test('the right password for the data renews the device cookie, as a sign-in does: the wrong ones typed before it stop counting against this browser', async () => {
    const { visitor } = await member();
    for (let i = 0; i < SIGN_IN_FAILURES_PER_DEVICE - 1; i++) assert.equal((await download(visitor, { password: `wrong ${i}` })).status, 400);
    const before = visitor.cookies.get('svc_device');
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200);
    assert.notEqual(visitor.cookies.get('svc_device'), before, 'a new device cookie, with the file');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_DEVICE - 1; i++) assert.equal((await download(visitor, { password: `wrong again ${i}` })).status, 400);
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200, 'the failures before the file no longer count');
  });

  test('with two-step verification on, a code of the authenticator app stands for the password', async () => {
    const { user, visitor } = await member();
    const enrolment = await beginTotpEnrolment(t.deps, user);
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, t.clock.now()));
    t.clock.advance(30_000);
    assert.match((await visitor.get('/settings/profile')).text, /<input type="text" id="data-code" name="code"/);
    const wrong = await download(visitor, { code: totpCode(enrolment!.secret, t.clock.now()) === '000000' ? '111111' : '000000' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /That code is not right/);
    const file = await download(visitor, { code: totpCode(enrolment!.secret, t.clock.now()) });
    assert.equal(file.status, 200);
    assert.equal(dataOf(file).twoStepVerification.on, true);
  });

  test('the file is a JSON attachment never cached, of the profile, address, apps, tokens, passkeys, two-step state, sessions, security log, posts, comments and likes, in UTC', async () => {
    const { user, visitor } = await member();
    const { stores } = t.deps;
    const now = t.clock.now();
    assert.equal((await visitor.post('/settings/profile', { nickname: 'Exporter', bio: 'Keeps copies', time_zone: 'Asia/Taipei' })).status, 303);
    await stores.memberEmails.set(user.id, 'exporter@example.com', 'en', now);
    await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'backup script', scopes: ['posts:read'], expiresInDays: 30 });
    const { client: reader } = await registerClient(stores, t.clock, { name: 'Reader', type: 'public', redirectUris: ['https://reader.example/cb'] });
    await stores.consents.save(user.id, reader.clientId, 'profile:read', now);
    await stores.grants.create({ userId: user.id, clientId: reader.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    await registerClient(stores, t.clock, { name: 'My tool', type: 'public', redirectUris: ['https://mine.example/cb'], ownerId: user.id });
    await stores.passkeys.insert({ credentialId: randomBytes(16).toString('base64url'), userId: user.id, name: 'Phone', publicKey: randomBytes(32).toString('base64url'), counter: 0, transports: [], backedUp: false }, now);
    assert.equal((await visitor.post('/posts/new', { title: 'Published one', category: 'Notes', body: '**Bold** words', status: 'published' })).status, 303);
    assert.equal((await visitor.post('/posts/new', { title: 'A draft', category: 'Notes', body: 'Not yet', status: 'draft' })).status, 303);
    const post = (await stores.posts.listPublishedByAuthor(user.id, 0, 1)).items[0]!;
    assert.equal((await visitor.post(`/posts/${post.id}/comments`, { comment: 'A comment of mine' })).status, 303);
    assert.equal((await visitor.post(`/posts/${post.id}/like`, {})).status, 303);

    const file = await download(visitor, { password: PASSWORD });
    assert.equal(file.status, 200);
    assert.match(file.headers.get('content-type') ?? '', /^application\/json; charset=utf-8$/);
    assert.equal(file.headers.get('cache-control'), 'no-store');
    assert.equal(file.headers.get('content-disposition'), `attachment; filename="community-data-${user.username}-${formatUtc(t.clock.now()).slice(0, 10)}.json"`);
    const data = dataOf(file);
    assert.deepEqual(
      { ...data.profile, createdAt: undefined },
      { id: user.id, username: user.username, nickname: 'Exporter', bio: 'Keeps copies', language: null, timeZone: 'Asia/Taipei', createdAt: undefined, status: 'active', member: user.member, level: user.level, xp: user.xp },
    );
    assert.deepEqual(data.email, { address: 'exporter@example.com', verified: false, verifiedAt: null, pendingAddress: null });
    assert.deepEqual(data.twoStepVerification, { on: false, recoveryCodesLeft: 0 });
    assert.deepEqual(data.passkeys.map((p: any) => p.name), ['Phone']);
    assert.deepEqual(data.authorizedApplications.map((a: any) => [a.name, a.clientId, a.scopes]), [['Reader', reader.clientId, ['profile:read']]]);
    assert.deepEqual(data.personalTokens.map((p: any) => [p.name, p.scopes, p.revokedAt]), [['backup script', ['posts:read'], null]]);
    assert.deepEqual(data.registeredApplications.map((a: any) => a.name), ['My tool']);
    assert.equal(data.sessions.length, 1, 'this browser');
    assert.ok(data.securityLog.some((e: any) => e.kind === 'sign_in.succeeded'), 'the sign-in');
    assert.deepEqual(data.posts.map((p: any) => [p.title, p.status, p.body]), [['Published one', 'published', '**Bold** words'], ['A draft', 'draft', 'Not yet']]);
    assert.deepEqual(data.comments.map((c: any) => [c.postId, c.body]), [[post.id, 'A comment of mine']]);
    assert.deepEqual(data.likes.map((l: any) => l.postId), [post.id]);
    // Every time, wherever it is, UTC in ISO 8601 with `Z`.
    const times: string[] = [];
    JSON.parse(file.text, (key, value) => { if (/At$|^at$/.test(key) && value !== null) times.push(value); return value; });
    assert.ok(times.length > 10, 'the times were found');
    for (const time of times) assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('the file holds no stored secret or hash of the member, nor any secret they were shown', async () => {
    const { user, visitor } = await member();
    const { stores, database: { db } } = t.deps;
    const now = t.clock.now();
    const shown: string[] = [PASSWORD];
    const enrolment = await beginTotpEnrolment(t.deps, user);
    shown.push(enrolment!.secret, ...await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, now)));
    t.clock.advance(30_000);
    shown.push((await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'script', scopes: ['profile:read'], expiresInDays: 30 })).token);
    const { client: reader } = await registerClient(stores, t.clock, { name: 'Reader', type: 'public', redirectUris: ['https://reader.example/cb'] });
    const grant = await stores.grants.create({ userId: user.id, clientId: reader.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const [access, refresh, code] = [generateToken('access'), generateToken('refresh'), randomBytes(32).toString('base64url')];
    shown.push(access, refresh, code);
    const issued = { grantId: grant.id, clientId: reader.clientId, userId: user.id, scope: 'profile:read', createdAt: now, expiresAt: now + 3_600_000 };
    await stores.tokens.insertPair({ ...issued, tokenHash: hashSecret(access) }, { ...issued, tokenHash: hashSecret(refresh) });
    await stores.codes.insert({
      codeHash: hashSecret(code), grantId: grant.id, clientId: reader.clientId, userId: user.id, redirectUri: 'https://reader.example/cb', scope: 'profile:read',
      codeChallenge: randomBytes(32).toString('base64url'), nonce: null, authTime: now, createdAt: now, expiresAt: now + 300_000,
    });
    const { secret } = await registerClient(stores, t.clock, { name: 'Mine', type: 'confidential', redirectUris: ['https://mine.example/cb'], ownerId: user.id });
    shown.push(secret!);
    await stores.passkeys.insert({ credentialId: randomBytes(16).toString('base64url'), userId: user.id, name: 'Key', publicKey: randomBytes(64).toString('base64url'), counter: 0, transports: [], backedUp: false }, now);
    await stores.passkeys.saveChallenge({ challenge: randomBytes(32).toString('base64url'), purpose: 'register', userId: user.id, expiresAt: now + 300_000 }, now);
    await stores.pendingSignIns.create({ idHash: hashSecret(randomBytes(16).toString('hex')), userId: user.id, amr: ['pwd'], returnTo: '/', expiresAt: now + 300_000 }, now);
    await stores.oneTimeSecrets.put({ idHash: hashSecret(randomBytes(16).toString('hex')), userId: user.id, purpose: 'personal_token', subject: '', sealed: randomBytes(48).toString('base64url'), expiresAt: now + 60_000 }, now);
    await stores.memberEmails.set(user.id, 'secretive@example.com', 'en', now);
    await stores.memberEmails.createLink({ tokenHash: hashSecret(randomBytes(16).toString('hex')), userId: user.id, purpose: 'verify_email', addressKey: 'secretive@example.com', expiresAt: now + 3_600_000 }, now);
    for (const cookie of visitor.cookies.values()) shown.push(cookie);

    const file = await download(visitor, { password: PASSWORD });
    assert.equal(file.status, 200);
    const stored = await storedSecrets(db, user.id);
    for (const column of SECRET_COLUMNS.flatMap((c) => c.columns.map((name) => `${c.table}.${name}`))) {
      if (['refresh_tokens.successor_hash', 'refresh_tokens.replay_sealed', 'clients.previous_secret_hash'].includes(column)) continue;
      assert.ok([...stored.values()].includes(column), `the member has a value of ${column} to look for`);
    }
    for (const [value, column] of stored) assert.ok(!file.text.includes(value), `${column} is in the file`);
    for (const value of shown) assert.ok(!file.text.includes(value), `a secret shown to the member is in the file: ${value.slice(0, 6)}…`);
  });

  test('downloading the data is told in the security log and the audit log', async () => {
    const { user, visitor } = await member();
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200);
    const log = await t.deps.stores.securityEvents.listForUser(user.id, 0, 10);
    assert.equal(log.items[0]?.kind, 'account.data_downloaded');
    assert.match((await visitor.get('/settings/security')).text, /Copy of your data downloaded/);
    const audited = t.audit.find((e): e is Extract<AuditEvent, { audit: 'account.data_downloaded' }> => e.audit === 'account.data_downloaded' && e.userId === user.id);
    assert.deepEqual(audited && { userId: audited.userId, via: audited.via, address: audited.address }, { userId: user.id, via: 'site', address: '127.0.0.1' });
  });

  test('a download whose security-log line cannot be written gives no file, as a sign-in whose line cannot be written signs no one in', async () => {
    const { user, visitor } = await member();
    const refused = await whileInsertsFail(t.deps.database.db, database, 'security_events', () => download(visitor, { password: PASSWORD }));
    assert.ok(refused.status >= 500, `an error page, not the file (${refused.status})`);
    assert.equal(refused.headers.get('content-disposition'), null, 'no file');
    assert.ok(!t.audit.some((e) => e.audit === 'account.data_downloaded' && e.userId === user.id), 'no audit line for a download that was not made');
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200, 'once the log takes lines again, the file');
  });

  test('files are written a few at a time: past those written and waiting, a download is refused with 503 and Retry-After, in the reader\'s language, and no file', async () => {
    const { user, visitor } = await member();
    await t.deps.stores.users.updateProfile(user.id, { language: 'zh-CN' }, t.clock.now());
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    // Other members' files, being built and waiting (each asker its own place).
    const holders = Array.from({ length: DATA_DOWNLOADS_AT_ONCE + DATA_DOWNLOADS_WAITING }, (_, i) => dataDownloadQueue.run(() => held, { asker: `other${i}` }));
    let refused: PageResponse;
    try {
      refused = await download(visitor, { password: PASSWORD });
    } finally {
      release();
      await Promise.all(holders);
    }
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    assert.doesNotMatch(refused.headers.get('content-type') ?? '', /json/, 'no file');
    assert.match(refused.text, /正在生成/, 'said in Chinese');
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200, 'the same download serves once the line drains');
  });

  /** `count` posts by `user` of `size` characters each, written straight to the store (a member's form takes one at a time). */
  async function writePosts(user: User, count: number, size: number, letter = 'x'): Promise<number[]> {
    const { stores } = t.deps;
    const category = await stores.posts.ensureCategory('Notes');
    const body = letter.repeat(size);
    const ids: number[] = [];
    await stores.transaction(async (tx) => {
      for (let i = 0; i < count; i++) {
        const post = await tx.posts.create({ authorId: user.id, categoryId: category.id, title: `Post ${i}`, body, bodyHtml: `<p>${body}</p>`, excerpt: 'x', status: 'published' }, t.clock.now());
        ids.push(post.id);
      }
    });
    return ids;
  }

  /**
   * Runs `work` while every picture a download reads (`Stores.readSnapshot`) reads its posts
   * through `listAllByAuthor` below: each page's call counted (from 1) and told to `onPage` before
   * it is read.
   */
  async function whilePostPagesRead<T>(onPage: (call: number, limit: number) => Promise<void> | void, work: () => Promise<T>): Promise<T> {
    const stores = t.deps.stores as { readSnapshot: Stores['readSnapshot'] };
    const original = stores.readSnapshot;
    stores.readSnapshot = (read) => original((picture) => {
      let calls = 0;
      const posts: PostStore = Object.create(picture.posts);
      posts.listAllByAuthor = async (authorId, after, limit) => {
        await onPage(++calls, limit);
        return picture.posts.listAllByAuthor(authorId, after, limit);
      };
      return read({ ...picture, posts });
    });
    try {
      return await work();
    } finally {
      stores.readSnapshot = original;
    }
  }

  /**
   * The download's reply over `node:http`, whose reader can pause it (`response.pause()`), once
   * it answered 200; `whole` tells, once it closes, whether it came to its end.
   */
  async function pausableDownload(visitor: Visitor): Promise<{ response: IncomingMessage; whole: Promise<boolean> }> {
    const { body, headers } = await downloadForm(visitor);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      request(`${t.baseUrl}/settings/account/data`, { method: 'POST', headers }, resolve).on('error', reject).end(body);
    });
    assert.equal(response.statusCode, 200);
    const whole = new Promise<boolean>((resolve) => response.on('close', () => resolve(response.complete)));
    response.on('error', () => undefined);
    return { response, whole };
  }

  /** The download's whole text, or the error its reader met part-way. */
  async function readToEnd(visitor: Visitor): Promise<{ text: string } | { error: unknown }> {
    const response = await startDownload(visitor);
    assert.equal(response.status, 200);
    return response.text().then((text) => ({ text }), (error: unknown) => ({ error }));
  }

  /** The download's reply as it comes, unread (`signal` ends it). */
  async function startDownload(visitor: Visitor, signal?: AbortSignal): Promise<Response> {
    const { body, headers } = await downloadForm(visitor);
    return fetch(`${t.baseUrl}/settings/account/data`, { method: 'POST', body, headers, signal });
  }

  /** The download form's body, with the right password, and its headers, for a request sent outside the visitor. */
  async function downloadForm(visitor: Visitor): Promise<{ body: string; headers: Record<string, string> }> {
    const body = new URLSearchParams({ _csrf: await visitor.csrf(), password: PASSWORD }).toString();
    return { body, headers: { ...visitor.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' } };
  }

  /** Until no download holds a turn (a loop of short waits: the test's own time limit ends one that never comes). */
  async function turnsGivenBack(): Promise<void> {
    while (dataDownloadQueue.state.running > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  test('the file is read a page of posts at a time and sent as it is read: 2,000 posts arrive whole, in order, with no Content-Length', async () => {
    const { user, visitor } = await member();
    const ids = await writePosts(user, 2_000, 100);
    const limits: number[] = [];
    const file = await whilePostPagesRead((_, limit) => { limits.push(limit); }, () => download(visitor, { password: PASSWORD }));
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-length'), null, 'streamed, not built whole first');
    assert.ok(limits.length >= 2_000 / DATA_PAGE, `read in pages (${limits.length} reads)`);
    for (const limit of limits) assert.ok(limit <= DATA_PAGE, `a page of at most ${DATA_PAGE}`);
    assert.deepEqual(dataOf(file).posts.map((p: any) => p.id), ids, 'every post, oldest first');
  });

  test('a read that fails part-way breaks the download off: the reader is left with a failed download, never a file that parses', async () => {
    const { user, visitor } = await member();
    await writePosts(user, 3 * DATA_PAGE, 100);
    const outcome = await whilePostPagesRead((call) => {
      if (call === 3) throw new Error('the database went away (a test)');
    }, () => readToEnd(visitor)).catch((error: unknown) => ({ error }));
    assert.ok('error' in outcome, 'the reader sees the download fail');
    await turnsGivenBack();
    assert.equal((await download(visitor, { password: PASSWORD })).status, 200, 'the turn was given back');
  });

  test('an account suspended while its data is read has its download broken off at the next page: the reader is left with a failed download', async () => {
    const { user, visitor } = await member();
    await writePosts(user, 3 * DATA_PAGE, 100);
    const outcome = await whilePostPagesRead(async (call) => {
      if (call === 2) assert.ok(await setAccountStatus(t.deps.stores, t.clock, user.id, 'suspended'));
    }, () => readToEnd(visitor));
    assert.ok('error' in outcome, `the reader sees the download fail, not a file of ${'text' in outcome ? outcome.text.length : 0} characters`);
    await turnsGivenBack();
    assert.deepEqual(dataDownloadQueue.state, { running: 0, waiting: 0 });
  });

  test('a download whose session is signed out while it is read is broken off: the member taking the account back ends the taker\'s download', async () => {
    const { user, visitor } = await member();
    await writePosts(user, 3 * DATA_PAGE, 100);
    const outcome = await whilePostPagesRead(async (call) => {
      if (call === 2) await t.deps.stores.sessions.endForUser(user.id, t.clock.now());
    }, () => readToEnd(visitor));
    assert.ok('error' in outcome, 'the reader sees the download fail');
    await turnsGivenBack();
  });

  test('a download whose session is signed out while it waits its turn gets no file, not even its first part', async () => {
    const { user, visitor } = await member();
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const holder = dataDownloadQueue.run(() => held, { asker: 'other' });
    let refused: Response;
    try {
      const waiting = startDownload(visitor);
      while (dataDownloadQueue.state.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await t.deps.stores.sessions.endForUser(user.id, t.clock.now());
      release();
      refused = await waiting;
    } finally {
      release();
      await holder;
    }
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('content-disposition'), null, 'no file');
    assert.doesNotMatch(await refused.text(), /"profile"/, 'nothing of the data');
  });

  test('an account suspended after its last page was read still has its download broken off before the file ends', async () => {
    // Suspended at the read that finds no more posts, with exactly a page of them.
    const listed = await member();
    await writePosts(listed.user, DATA_PAGE, 100);
    const afterLastPage = await whilePostPagesRead(async (call) => {
      if (call === 2) assert.ok(await setAccountStatus(t.deps.stores, t.clock, listed.user.id, 'suspended'));
    }, () => readToEnd(listed.visitor));
    assert.ok('error' in afterLastPage, 'no whole file once the account was suspended after its last page was read');
    await turnsGivenBack();
  });

  test('an account suspended while a page of megabytes is written has its download broken off within 256 KiB, not at the page\'s end', async () => {
    // The one page: 24 MB of it (three bytes a character; longer posts than the
    // site takes, written to the store), far more than the sockets' buffers hold (about 4 MB here),
    // which the reader takes slowly. Broken off within 256 KiB once it reads again, the reader
    // receives what the buffers held and little more, not the rest of the page.
    const { user, visitor } = await member();
    const pageBytes = (DATA_PAGE - 1) * 40_000 * 3;
    await writePosts(user, DATA_PAGE - 1, 40_000, '字');
    const { response, whole } = await pausableDownload(visitor);
    let received = 0;
    response.on('data', (chunk: Buffer) => { received += chunk.length; });
    response.pause();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(dataDownloadQueue.state.running, 1, 'the file is being written when the account is suspended');
    assert.ok(await setAccountStatus(t.deps.stores, t.clock, user.id, 'suspended'));
    response.resume();
    assert.equal(await whole, false, 'broken off before its end');
    assert.ok(received < pageBytes / 2, `broken off within the page: ${received} of its ${pageBytes} bytes received`);
    await turnsGivenBack();
  });

  test('a download holds its turn while its reader reads, and gives it back when the reader goes away', async () => {
    const { user, visitor } = await member();
    // Far more than the sockets' buffers hold: the writing waits for the reader.
    await writePosts(user, 1_500, 20_000);
    const reader = new AbortController();
    const response = await startDownload(visitor, reader.signal);
    assert.equal(response.status, 200);
    assert.equal(dataDownloadQueue.state.running, 1, 'the turn is held while the file is read');
    reader.abort();
    await response.text().catch(() => undefined);
    await turnsGivenBack();
    assert.deepEqual(dataDownloadQueue.state, { running: 0, waiting: 0 });
  });

  test('a reader that takes the file slower than 16 KiB a second on the whole is broken off, however often it takes a little', async () => {
    const { user, visitor } = await member();
    // Far more than the sockets' buffers hold: the writing waits for the reader.
    await writePosts(user, 1_500, 20_000);
    const { response, whole } = await pausableDownload(visitor);
    // The reader takes nothing while an hour passes, then takes all it is given: each pause was
    // shorter than the patience, but the file came far slower than the rate.
    response.pause();
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.clock.advance(3_600_000);
    response.resume();
    assert.equal(await whole, false, 'broken off before its end');
    await turnsGivenBack();
    assert.deepEqual(dataDownloadQueue.state, { running: 0, waiting: 0 });
  });

  test('the file is one picture of the data as the download began: a post written or changed while it is read is not in it, and the file is whole', async () => {
    const { user, visitor } = await member();
    const ids = await writePosts(user, DATA_PAGE + 10, 100);
    let written: number | undefined;
    const file = await whilePostPagesRead(async (call) => {
      if (call !== 2) return;
      const category = await t.deps.stores.posts.ensureCategory('Notes');
      written = (await t.deps.stores.posts.create({ authorId: user.id, categoryId: category.id, title: 'Written meanwhile', body: 'new', bodyHtml: '<p>new</p>', excerpt: 'new', status: 'published' }, t.clock.now())).id;
      await t.deps.database.db.updateTable('posts').set({ title: 'Changed meanwhile' }).where('id', '=', ids.at(-1)!).execute();
    }, () => download(visitor, { password: PASSWORD }));
    assert.equal(file.status, 200);
    assert.ok(written !== undefined, 'a post was written while the file was read');
    const posts = dataOf(file).posts as Array<{ id: number; title: string }>;
    assert.deepEqual(posts.map((p) => p.id), ids, 'the post written meanwhile is not in it');
    assert.equal(posts.at(-1)!.title, `Post ${ids.length - 1}`, 'the post changed meanwhile is as it was');
  });

  test('a download racing the account\'s deletion writes nothing for the erased account', async () => {
    const erase = async (user: User) => {
      const deleted = await deleteAccount(t.deps, user, { password: PASSWORD, code: '' }, { address: '127.0.0.1', deviceCookie: undefined });
      assert.equal(deleted.ok, true);
    };
    // Deleted while the file is read: the file is broken off, and the deletion erased its line.
    const during = await member();
    await writePosts(during.user, 1, 10);
    assert.ok('error' in await whilePostPagesRead(() => erase(during.user), () => readToEnd(during.visitor)), 'the reader sees the download fail');
    assert.deepEqual((await t.deps.stores.securityEvents.listForUser(during.user.id, 0, 10)).items, [], 'no line outlives the erase');
    // Deleted between the line and the picture: no file, and nothing left.
    const before = await member();
    const stores = t.deps.stores as { readSnapshot: Stores['readSnapshot'] };
    const original = stores.readSnapshot;
    stores.readSnapshot = async (read) => {
      await erase(before.user);
      return original(read);
    };
    let refused: PageResponse;
    try {
      refused = await download(before.visitor, { password: PASSWORD });
    } finally {
      stores.readSnapshot = original;
    }
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('content-disposition'), null, 'no file');
    assert.deepEqual((await t.deps.stores.securityEvents.listForUser(before.user.id, 0, 10)).items, [], 'no line outlives the erase');
  });
});
