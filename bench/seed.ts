/**
 * The benchmark's data set, written straight into the database in bulk (Kysely, one transaction
 * per table, as many rows per statement as the parameter limit allows): users sharing one argon2
 * hash, posts (one user with 1,000, one with 10,000), one grant per user for the confidential
 * client, live access tokens spread over the grants (and as many DPoP-bound), refresh token chains
 * with and without `openid`, sessions with remembered consent for the code flow, accounts with
 * two-step verification. Tokens are stored only as `hashSecret()`; the raw values the load generator needs
 * come back to the caller.
 */
import { type Insertable, type Kysely, sql } from 'kysely';
import { generateOpaqueId, generateToken, hashSecret } from '../src/core/credentials/formats.js';
import { hashPassword } from '../src/core/accounts/passwords.js';
import { sealSecret } from '../src/core/credentials/sealing.js';
import { newTotpSecret } from '../src/core/accounts/totp.js';
import { totpPlace } from '../src/core/accounts/two-step.js';
import { renderBody } from '../src/core/community/posts.js';
import { registerClient } from '../src/core/oauth/clients.js';
import { REGISTERED_SCOPES } from '../src/core/oauth/scopes.js';
import { ensureSigningKeys } from '../src/core/oidc/keys.js';
import { systemClock } from '../src/core/time.js';
import type { Deps } from '../src/deps.js';
import type { Database } from '../src/storage/schema.js';

export interface SeedSize {
  users: number;
  posts: number;
  accessTokens: number;
  /** Posts of the one heavy user (scenarios b1, b2). */
  heavyUserPosts: number;
  /** Posts of the one prolific user (scenarios b3, b4: issue 20's "a user with 10,000 posts"). */
  prolificUserPosts: number;
  /** Refresh chains per set: a refresh load's warm-up and each of its measured runs get a set of their own. */
  refreshChains: number;
  /** Signed-in users with remembered consent (scenario e). */
  sessions: number;
  /** Access tokens the load generator rotates through (scenario a); as many again are DPoP-bound (scenario h2). */
  rotatingTokens: number;
  /** Accounts with two-step verification, per set (scenario h4): a code is accepted once per account and time step. */
  totpUsers: number;
  /** Accounts created per day, the last one now: the staff overview counts those of its 14 days. */
  joinedPerDay: number;
}

export const FULL_SEED: SeedSize = {
  users: 10_000, posts: 100_000, accessTokens: 100_000, heavyUserPosts: 1_000, prolificUserPosts: 10_000,
  refreshChains: 256, sessions: 1_000, rotatingTokens: 1_000, totpUsers: 1_500, joinedPerDay: 1_440,
};

/**
 * The smoke run's data set: small, but with the 1,000-post user so the deep page exists, and two-step
 * accounts enough for a second of sign-ins at 300 a second (h4 with 4 connections reached 129 a
 * second on 2026-11-24 and used up the 130 it had, each account's code being good once a step).
 */
export const SMOKE_SEED: SeedSize = {
  users: 1_000, posts: 2_000, accessTokens: 1_000, heavyUserPosts: 1_000, prolificUserPosts: 500,
  refreshChains: 16, sessions: 50, rotatingTokens: 200, totpUsers: 300, joinedPerDay: 1_440,
};

/**
 * `--staff-overview` (issue 35 item 4): 100,000 members, 14,000 of them joined in the last 14
 * days, and a million access tokens; nothing the overview does not read beyond what seeding needs.
 */
export const STAFF_OVERVIEW_SEED: SeedSize = {
  users: 100_000, posts: 2, accessTokens: 1_000_000, heavyUserPosts: 1, prolificUserPosts: 1,
  refreshChains: 1, sessions: 1, rotatingTokens: 1, totpUsers: 1, joinedPerDay: 1_000,
};

/** The staff overview's smoke run: the same shape, small. */
export const STAFF_OVERVIEW_SMOKE_SEED: SeedSize = { ...STAFF_OVERVIEW_SEED, users: 400, accessTokens: 1_000, joinedPerDay: 40 };

export interface SeededData {
  redirectUri: string;
  publicClientId: string;
  confidential: { clientId: string; secret: string };
  /** Raw access tokens of different users, every one with `profile:read posts:read`. */
  rotatingTokens: string[];
  /** Raw access tokens of the heavy user. */
  heavyUserTokens: string[];
  /** Raw access tokens of the prolific user. */
  prolificUserTokens: string[];
  /** Raw refresh tokens of the confidential client (BENCH_SCOPE): one array of chains per set. */
  refreshChains: string[][];
  /** The same without `openid` (PLAIN_SCOPE): no id_token on refresh (scenario d2). */
  plainRefreshChains: string[][];
  /** Raw access tokens bound to the DPoP key whose thumbprint the caller gave (scenario h2). */
  dpopTokens: string[];
  /** Usernames of accounts whose second step is a TOTP code of `totpSecret`: one array per set. */
  totpUsers: string[][];
  totpSecret: string;
  /** Raw session cookie values of signed-in users who consented to the public client. */
  sessionIds: string[];
  scope: string;
}

/**
 * Bound parameters per statement: SQLite's limit as better-sqlite3 builds it (MAX_VARIABLE_NUMBER,
 * 32,766), the lower of the two (PostgreSQL takes 65,535). Fewer, larger statements seed faster.
 */
const PARAMETER_LIMIT = 32_766;
const DAY_MS = 86_400_000;
/** Raw access tokens kept for the heavy user and for the prolific one (scenario b rotates through them). */
const HEAVY_USER_TOKENS = 32;
const CATEGORIES = ['Announcements', 'Photography', 'Travel', 'Cooking', 'Music'];
export const BENCH_SCOPE = 'openid profile:read posts:read';
export const PLAIN_SCOPE = 'profile:read posts:read';
export const BENCH_PASSWORD = 'bench-password';
/**
 * An https redirect: the returning-user code flow relies on remembered consent, which a public
 * client on a loopback or private-scheme redirect (a native app) never gets (RFC 8252 8.6).
 */
export const BENCH_REDIRECT_URI = 'https://app.bench.example/callback';
/** What the bench's client ID metadata documents say (besides their client_id): an agent with the bench's redirect. */
export const BENCH_AGENT = { client_name: 'Bench Agent', redirect_uris: [BENCH_REDIRECT_URI], token_endpoint_auth_method: 'none' };

/**
 * Inserts the rows into the table in one transaction, each statement as large as the parameter
 * limit allows. Rows may come from a generator, so millions of them never sit in memory at once.
 */
async function insertChunks<T extends keyof Database>(db: Kysely<Database>, table: T, rows: Iterable<Insertable<Database[T]>>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    let chunk: Insertable<Database[T]>[] = [];
    let chunkRows = Number.POSITIVE_INFINITY;
    const flush = () => trx.insertInto(table).values(chunk).execute();
    for (const row of rows) {
      if (chunk.length === 0) chunkRows = Math.floor(PARAMETER_LIMIT / Object.keys(row).length);
      chunk.push(row);
      if (chunk.length === chunkRows) { await flush(); chunk = []; }
    }
    if (chunk.length > 0) await flush();
  });
}

const BODY = 'Shot at 6:40 with a 35mm lens. The fog lifted just as the ferries started running, and the light turned '
  + '<b>gold</b> for about four minutes before the clouds rolled back in. I kept shooting until the harbour woke up.';
/** What `writePost` stores with BODY. */
const RENDERED = renderBody(BODY);

/**
 * Seeds a migrated, empty database; `chainSets` is how many independent refresh chain sets to make.
 * `rotatingTokens` (raw, `size.rotatingTokens` of them) are stored instead of new ones, so that
 * two data sets can be measured with the very same load.
 */
export async function seedBench(deps: Deps, size: SeedSize, chainSets: number, dpopJkt: string, rotatingTokens?: readonly string[]): Promise<SeededData> {
  if (size.accessTokens < size.rotatingTokens) throw new Error('the rotating tokens are among the stored access tokens: accessTokens must be at least rotatingTokens');
  if (rotatingTokens && rotatingTokens.length !== size.rotatingTokens) throw new Error(`expected ${size.rotatingTokens} rotating tokens, got ${rotatingTokens.length}`);
  const db = deps.database.db;
  if (deps.database.dialect === 'sqlite') {
    // A page cache that holds the token index, so a million random-key inserts in one transaction
    // do not spill pages to the WAL over and over (26 s → 16 s). Only this connection: the server
    // opens its own with the default.
    await sql`pragma cache_size = -524288`.execute(db);
  }
  const now = systemClock.now();
  await ensureSigningKeys(deps.stores, deps.clock, deps.settings.keysSecret);
  const passwordHash = await hashPassword(BENCH_PASSWORD);

  const users = Array.from({ length: size.users }, (_, i) => {
    const username = `user${String(i + 1).padStart(6, '0')}`;
    return {
      username, username_key: username, password_hash: passwordHash, status: 'active',
      bio: `Member number ${i + 1}. I like long walks and short posts.`, member: i % 3 === 0 ? 1 : 0,
      level: (i % 40) + 1, xp: (i * 37) % 5000, created_at: now - Math.round(((size.users - 1 - i) * DAY_MS) / size.joinedPerDay), updated_at: now,
    };
  });
  await insertChunks(db, 'users', users);
  const userIds = (await db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => r.id);
  const heavyUserId = userIds[0]!;
  const prolificUserId = userIds[1]!;
  if (size.heavyUserPosts + size.prolificUserPosts > size.posts) throw new Error('posts must hold the heavy and the prolific user\'s');

  await db.insertInto('categories').values(CATEGORIES.map((name) => ({ name, name_key: name.toLowerCase() }))).execute();
  const categoryIds = (await db.selectFrom('categories').select('id').execute()).map((r) => r.id);
  const posts = Array.from({ length: size.posts }, (_, i) => {
    const authorId = i < size.heavyUserPosts ? heavyUserId
      : i < size.heavyUserPosts + size.prolificUserPosts ? prolificUserId : userIds[2 + (i % (userIds.length - 2))]!;
    return {
      author_id: authorId, category_id: categoryIds[i % categoryIds.length]!, title: `Post number ${i + 1}`, body: BODY, body_html: RENDERED.html, excerpt: RENDERED.excerpt,
      status: i % 10 === 9 && i >= size.heavyUserPosts + size.prolificUserPosts ? 'draft' : 'published',
      like_count: i % 50, comment_count: i % 7, view_count: i % 300,
      created_at: now - (size.posts - i) * 1000, updated_at: now,
    };
  });
  await insertChunks(db, 'posts', posts);

  const owner = { ownerId: heavyUserId };
  const confidential = await registerClient(deps.stores, deps.clock, {
    name: 'Bench Confidential', type: 'confidential', redirectUris: [BENCH_REDIRECT_URI], ...owner,
  });
  const publicClient = await registerClient(deps.stores, deps.clock, {
    name: 'Bench Public', type: 'public', redirectUris: [BENCH_REDIRECT_URI], ...owner,
  });
  const clientId = confidential.client.clientId;

  // One grant per user for the confidential client; the refresh chains get grants of their own below.
  const grantOf = (userId: number, scope: string) => ({
    user_id: userId, client_id: clientId, scope, nonce: null, auth_time: now,
    created_at: now, last_used_at: now, revoked_at: null, revoked_reason: null,
  });
  await insertChunks(db, 'grants', userIds.map((userId) => grantOf(userId, BENCH_SCOPE)));
  const grantRows = await db.selectFrom('grants').select(['id', 'user_id']).where('client_id', '=', clientId).orderBy('id').execute();

  const expiresAt = now + 86_400_000;
  const rotating = rotatingTokens ? [...rotatingTokens] : Array.from({ length: size.rotatingTokens }, () => generateToken('access'));
  const heavyUserTokens: string[] = [];
  const prolificUserTokens: string[] = [];
  // Raw values only where the load generator needs them. The other rows store the hash of a salted
  // counter: unguessable and spread over the index like a real token's hash, at a fraction of
  // generateToken()'s cost, which matters at a million rows.
  const salt = generateOpaqueId();
  function* accessTokens() {
    for (let i = 0; i < size.accessTokens; i++) {
      const grant = grantRows[i % userIds.length]!;
      let raw = rotating[i];
      if (grant.user_id === heavyUserId && heavyUserTokens.length < HEAVY_USER_TOKENS) {
        raw ??= generateToken('access');
        heavyUserTokens.push(raw);
      } else if (grant.user_id === prolificUserId && prolificUserTokens.length < HEAVY_USER_TOKENS) {
        raw ??= generateToken('access');
        prolificUserTokens.push(raw);
      }
      yield {
        token_hash: hashSecret(raw ?? `${salt}.${i}`), grant_id: grant.id, client_id: clientId, user_id: grant.user_id,
        scope: BENCH_SCOPE, created_at: now, expires_at: expiresAt, revoked_at: null,
      };
    }
  }
  await insertChunks(db, 'access_tokens', accessTokens());

  // DPoP-bound tokens of the rotating tokens' users (RFC 9449 6: the row holds the key's thumbprint).
  const dpopTokens = Array.from({ length: size.rotatingTokens }, () => generateToken('access'));
  await insertChunks(db, 'access_tokens', dpopTokens.map((raw, i) => {
    const grant = grantRows[i % userIds.length]!;
    return {
      token_hash: hashSecret(raw), grant_id: grant.id, client_id: clientId, user_id: grant.user_id,
      scope: BENCH_SCOPE, created_at: now, expires_at: expiresAt, revoked_at: null, dpop_jkt: dpopJkt,
    };
  }));

  /** `chainSets` sets of refresh chains with `scope`, each chain with a grant of its own. */
  const refreshChainSets = async (scope: string): Promise<string[][]> => {
    const owners = Array.from({ length: size.refreshChains * chainSets }, (_, i) => userIds[i % userIds.length]!);
    const first = await db.insertInto('grants').values(owners.map((userId) => grantOf(userId, scope))).returning('id').execute();
    const sets: string[][] = Array.from({ length: chainSets }, () => []);
    await insertChunks(db, 'refresh_tokens', first.map(({ id }, i) => {
      const raw = generateToken('refresh');
      sets[Math.floor(i / size.refreshChains)]!.push(raw);
      return {
        token_hash: hashSecret(raw), grant_id: id, client_id: clientId, user_id: owners[i]!,
        scope, created_at: now, expires_at: now + 30 * 86_400_000, used_at: null, revoked_at: null,
      };
    }));
    return sets;
  };
  const refreshChains = await refreshChainSets(BENCH_SCOPE);
  const plainRefreshChains = await refreshChainSets(PLAIN_SCOPE);

  // Two-step accounts: every one with the same authenticator secret (each keeps its own last step).
  const totpSecret = newTotpSecret();
  // As many per set as asked, or as the users allow (the first two are the heavy and the prolific).
  const totpPerSet = Math.min(size.totpUsers, Math.floor((userIds.length - 2) / chainSets));
  const totpUserIds = userIds.slice(2, 2 + totpPerSet * chainSets);
  await insertChunks(db, 'totp_credentials', totpUserIds.map((userId) => ({
    user_id: userId, secret: sealSecret(totpSecret, deps.settings.keysSecret, totpPlace(userId)), created_at: now, confirmed_at: now, last_step: null,
  })));
  // Users and their ids are in the same order (inserted in order, read back by id).
  const totpUsers = Array.from({ length: chainSets }, (_, set) => users
    .slice(2 + set * totpPerSet, 2 + (set + 1) * totpPerSet)
    .map((user) => user.username));

  const sessionIds: string[] = [];
  const sessions = userIds.slice(0, size.sessions).map((userId) => {
    const id = generateOpaqueId();
    sessionIds.push(id);
    return { id_hash: hashSecret(id), user_id: userId, auth_time: now, created_at: now, last_seen_at: now, expires_at: now + 86_400_000, ended_at: null };
  });
  await insertChunks(db, 'sessions', sessions);
  const consents = userIds.slice(0, size.sessions).map((userId) => ({
    user_id: userId, client_id: publicClient.client.clientId, scope: BENCH_SCOPE, created_at: now, updated_at: now,
  }));
  await insertChunks(db, 'consents', consents);

  if (deps.database.dialect === 'postgres') {
    // Settle the new rows as a running database has them (planner statistics, visibility map), so
    // that autovacuum does not take on a million fresh rows in the middle of a measurement.
    await sql`vacuum analyze`.execute(db);
  }

  return {
    redirectUri: BENCH_REDIRECT_URI,
    publicClientId: publicClient.client.clientId,
    confidential: { clientId, secret: confidential.secret! },
    rotatingTokens: rotating, heavyUserTokens, prolificUserTokens, refreshChains, plainRefreshChains, dpopTokens,
    totpUsers, totpSecret, sessionIds, scope: BENCH_SCOPE,
  };
}

/**
 * A browser signed in as `userId` just now, with password and code (`pwd otp`), as a sign-in
 * writes its session row; returns the session cookie's value.
 */
export async function seedSession(db: Kysely<Database>, userId: number, now: number): Promise<string> {
  const id = generateOpaqueId();
  await db.insertInto('sessions').values({
    id_hash: hashSecret(id), user_id: userId, auth_time: now, created_at: now, last_seen_at: now, expires_at: now + DAY_MS, ended_at: null, amr: 'pwd otp',
  }).execute();
  return id;
}

/**
 * The app of the client ID metadata document `clientId` (one that says what BENCH_AGENT says) as
 * the members' approvals left it, after `seedBench`: its row as the document describes it, and the
 * consent of every signed-in user (scenario e3).
 */
export async function seedDocumentApp(deps: Deps, clientId: string): Promise<void> {
  const now = systemClock.now();
  await deps.stores.clients.saveDescribed({
    clientId, name: BENCH_AGENT.client_name, description: '', homepageUrl: '', ownerId: null, type: 'public',
    redirectUris: BENCH_AGENT.redirect_uris, allowedScopes: [...REGISTERED_SCOPES], secretHash: null, idTokenAlg: 'RS256',
  }, now);
  const signedIn = await deps.database.db.selectFrom('sessions').select('user_id').distinct().execute();
  await insertChunks(deps.database.db, 'consents', signedIn.map(({ user_id: userId }) => ({
    user_id: userId, client_id: clientId, scope: BENCH_SCOPE, created_at: now, updated_at: now,
  })));
}
