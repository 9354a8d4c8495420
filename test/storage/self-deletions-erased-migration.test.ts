/**
 * Migration 2026-12-01-0060-self-deletions-erased: an account its member deleted before the
 * deletion erased the records of its use (its `account.deleted` line in its security log, newer
 * than any status change by staff) loses them all, on SQLite and PostgreSQL; an account staff
 * deleted keeps its, and so does an active one.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { migrateTo } from '../../src/storage/migrate.js';
import { forEachDatabase } from '../support/databases.js';

const T0 = Date.UTC(2026, 10, 30, 0, 0, 0);

/** The tables a member's own deletion erases by `user_id`, and the grant's codes and tokens with them. */
const TABLES = [
  'sessions', 'security_events', 'personal_tokens', 'grants', 'authorization_codes', 'access_tokens', 'refresh_tokens', 'consents', 'passkeys',
  'webauthn_challenges', 'pending_sign_ins', 'one_time_secrets', 'totp_credentials', 'recovery_codes', 'member_emails', 'email_links', 'mail_outbox', 'avatars',
] as const;

forEachDatabase('self deletions erased migration', (database) => {
  let handle: DatabaseHandle;
  let db: Kysely<any>;

  before(async () => {
    handle = openDatabase(database.target);
    db = handle.db;
    await migrateTo(db, '2026-12-01-0050-site-refusals-cleared');
  });
  after(() => handle.close());

  /** An account with a row in every table the deletion erases, its bio and nickname set. */
  async function accountWithRecords(name: string, status: string): Promise<number> {
    const userId = (await db.insertInto('users').values({
      username: name, username_key: name, password_hash: 'x', status, bio: 'my bio', nickname: `${name} nick`, member: 0, level: 1, xp: 0,
      created_at: T0, updated_at: T0, status_changed_at: T0,
    }).returning('id').executeTakeFirstOrThrow()).id as number;
    const at = { created_at: T0 };
    await db.insertInto('sessions').values({ id_hash: `s-${name}`, user_id: userId, auth_time: T0, last_seen_at: T0, expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('security_events').values({ user_id: userId, kind: 'sign_in.succeeded', ...at }).execute();
    await db.insertInto('personal_tokens').values({ user_id: userId, name: 'cli', token_hash: `p-${name}`, scope: 'profile:read', expires_at: null, ...at }).execute();
    await db.insertInto('clients').values({
      client_id: `app-${name}`, name: 'App', description: '', homepage_url: '', owner_id: null, type: 'public', redirect_uris: '["https://app.example/cb"]',
      allowed_scopes: 'profile:read', status: 'active', secret_hash: null, id_token_alg: 'RS256', created_at: T0, updated_at: T0,
    }).execute();
    const client = { client_id: `app-${name}`, user_id: userId, scope: 'profile:read' };
    const grantId = (await db.insertInto('grants').values({ ...client, nonce: null, auth_time: T0, last_used_at: T0, ...at }).returning('id').executeTakeFirstOrThrow()).id as number;
    await db.insertInto('authorization_codes').values({
      ...client, code_hash: `c-${name}`, grant_id: grantId, redirect_uri: 'https://app.example/cb', code_challenge: null, nonce: null, auth_time: T0, expires_at: T0 + 1, ...at,
    }).execute();
    await db.insertInto('access_tokens').values({ ...client, token_hash: `a-${name}`, grant_id: grantId, expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('refresh_tokens').values({ ...client, token_hash: `r-${name}`, grant_id: grantId, expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('consents').values({ ...client, updated_at: T0, ...at }).execute();
    await db.insertInto('passkeys').values({ credential_id: `k-${name}`, user_id: userId, name: 'key', public_key: 'pk', counter: 0, ...at }).execute();
    await db.insertInto('webauthn_challenges').values({ challenge: `w-${name}`, purpose: 'register', user_id: userId, expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('pending_sign_ins').values({ id_hash: `ps-${name}`, user_id: userId, amr: '["pwd"]', return_to: '/', expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('one_time_secrets').values({ id_hash: `o-${name}`, user_id: userId, purpose: 'personal_token', sealed: 'x', expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('totp_credentials').values({ user_id: userId, secret: 'x', confirmed_at: T0, ...at }).execute();
    await db.insertInto('recovery_codes').values({ user_id: userId, code_hash: `rc-${name}`, ...at }).execute();
    await db.insertInto('member_emails').values({ user_id: userId, address: `${name}@example.test`, address_key: `${name}@example.test`, verified_at: T0, updated_at: T0 }).execute();
    await db.insertInto('email_links').values({ token_hash: `e-${name}`, user_id: userId, purpose: 'verify_email', address_key: `${name}@example.test`, expires_at: T0 + 1, ...at }).execute();
    await db.insertInto('mail_outbox').values({ user_id: userId, kind: 'verifyEmail', recipient: `${name}@example.test`, subject: '', body_text: '', body_html: null, next_attempt_at: T0, ...at }).execute();
    await db.insertInto('avatars').values({ user_id: userId, content_type: 'image/png', image: new Uint8Array([1, 2, 3]), updated_at: T0 }).execute();
    return userId;
  }

  /** The tables that still hold a row of the account, its bio and nickname. */
  async function left(userId: number) {
    const tables: string[] = [];
    for (const table of TABLES) {
      if ((await db.selectFrom(table).select('user_id').where('user_id', '=', userId).execute()).length > 0) tables.push(table);
    }
    const { bio, nickname } = await db.selectFrom('users').select(['bio', 'nickname']).where('id', '=', userId).executeTakeFirstOrThrow();
    return { tables, bio, nickname };
  }

  const statusChange = (userId: number, status: string, createdAt: number) => db.insertInto('staff_log').values({
    created_at: createdAt, actor_id: null, actor_name: 'cli', action: 'member.status', target_kind: 'member', target_id: String(userId), target_name: '',
    detail: JSON.stringify({ status }), reason: 'test',
  }).execute();
  const selfDeletion = (userId: number, createdAt: number) => db.insertInto('security_events').values({ user_id: userId, kind: 'account.deleted', created_at: createdAt }).execute();

  test('an account its member deleted before the deletion erased its records loses them all; one staff deleted keeps them, and so does one made active again and deleted by staff', async () => {
    // Its member deleted it, after staff had suspended it once and made it active again.
    const own = await accountWithRecords('own', 'deleted');
    await statusChange(own, 'suspended', T0 + 1_000);
    await statusChange(own, 'active', T0 + 2_000);
    await selfDeletion(own, T0 + 3_000);
    // Staff deleted it: no `account.deleted` line.
    const staffs = await accountWithRecords('staffs', 'deleted');
    await statusChange(staffs, 'deleted', T0 + 1_000);
    // Its member deleted it, staff made it active again, then deleted it.
    const undone = await accountWithRecords('undone', 'deleted');
    await selfDeletion(undone, T0 + 1_000);
    await statusChange(undone, 'active', T0 + 2_000);
    await statusChange(undone, 'deleted', T0 + 3_000);
    // Its member deleted it, and staff made it active again.
    const back = await accountWithRecords('back', 'active');
    await selfDeletion(back, T0 + 1_000);
    await statusChange(back, 'active', T0 + 2_000);
    const active = await accountWithRecords('active', 'active');

    await migrateTo(db, '2026-12-01-0060-self-deletions-erased');

    assert.deepEqual(await left(own), { tables: [], bio: '', nickname: null }, 'the member\'s own deletion: every record erased');
    for (const [userId, name] of [[staffs, 'staffs'], [undone, 'undone'], [back, 'back'], [active, 'active']] as const) {
      assert.deepEqual(await left(userId), { tables: [...TABLES], bio: 'my bio', nickname: `${name} nick` }, `${name}: kept`);
    }
  });
});
