/**
 * Downloading one's data (GDPR Art. 15 and 20; docs/site.md, "Downloading your data") over real
 * HTTP on each database: asked with the password, or a code in its place, counted as a sign-in is;
 * a JSON file of everything the member gave or did, times in UTC, and no secret or hash of one.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { DATA_DOWNLOADS_AT_ONCE, DATA_DOWNLOADS_WAITING, dataDownloadQueue } from '../../src/core/accounts/data-export.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import type { AuditEvent } from '../../src/core/audit.js';
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

  test('a download whose security-log line cannot be written still answers the file and keeps its audit line', async () => {
    const { user, visitor } = await member();
    const file = await whileInsertsFail(t.deps.database.db, database, 'security_events', () => download(visitor, { password: PASSWORD }));
    assert.equal(file.status, 200, 'not an error page');
    assert.equal(dataOf(file).profile.username, user.username);
    assert.ok(t.audit.some((e) => e.audit === 'account.data_downloaded' && e.userId === user.id), 'the audit line is written all the same');
    assert.ok(logLines.some((line) => line.includes(`"userId":${user.id}`) && /security-log line/.test(line)), 'the operator is told');
  });

  test('files are built a few at a time, each whole in memory: past those built and waiting, a download is refused with 503 and Retry-After, in the reader\'s language, and no file', async () => {
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
});
