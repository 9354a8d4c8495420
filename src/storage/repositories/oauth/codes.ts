import { type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import type { AuthorizationCode, CodeIssuance, CodeRedemption, CodeStore, GrantWithUser, PresentedCode, Redemption } from '../../../core/oauth/ports.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, type QueryBuilder, aloneRetried } from '../../database.js';
import type { AuthorizationCodesTable, Database } from '../../schema.js';
import {
  KyselyGrantStore, NEW_GRANT, consumeWithGrant, consumedWithGrant, createGrant, grantIsLive, grantValues, storedWithGrantByKey, toGrantWithUser,
} from './grants.js';
import { holdsEveryScope, scopeList } from '../../../core/oauth/scopes.js';
import { KyselyConsentStore } from './consents.js';
import { KyselyUserStore } from '../accounts/users.js';
import { KyselyTokenStore, insertTokenIfLive, tokenValues, touchLiveGrant } from './tokens.js';

function toCode(row: Selectable<AuthorizationCodesTable>): AuthorizationCode {
  return {
    codeHash: row.code_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    redirectUri: row.redirect_uri,
    scope: row.scope,
    codeChallenge: row.code_challenge,
    nonce: row.nonce,
    authTime: row.auth_time,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    dpopJkt: row.dpop_jkt,
  };
}

type NewCode = Omit<AuthorizationCode, 'usedAt' | 'dpopJkt'> & { dpopJkt?: string | null };

/** The columns of a new code, in the order of the compiled inserts' parameters. */
function codeValues(code: NewCode) {
  return {
    code_hash: code.codeHash, grant_id: code.grantId, client_id: code.clientId, user_id: code.userId, redirect_uri: code.redirectUri,
    scope: code.scope, code_challenge: code.codeChallenge, nonce: code.nonce, auth_time: code.authTime, created_at: code.createdAt,
    expires_at: code.expiresAt, dpop_jkt: code.dpopJkt ?? null,
  };
}

/** The code's columns but `grant_id`, which the statement of `insertCodeUnderNewGrant` takes from the new grant. */
function valuesBesideGrant(code: Omit<NewCode, 'grantId'>) {
  const { grant_id: _, ...rest } = codeValues({ ...code, grantId: 0 });
  return rest;
}

const PLACEHOLDER_CODE = codeValues({
  codeHash: '', grantId: 0, clientId: '', userId: 0, redirectUri: '', scope: '', codeChallenge: '', nonce: '', authTime: 0, createdAt: 0, expiresAt: 0, dpopJkt: '',
});
const insertCode = (db: Kysely<Database>) => db.insertInto('authorization_codes').values(PLACEHOLDER_CODE);
/** A statement that inserts a grant as `g` before the code: the code's columns but `grant_id`, which is the new grant's. */
type AfterNewGrant = QueryCreator<Database & { g: { id: number } }>;
const CODE_COLUMNS = Object.keys(PLACEHOLDER_CODE) as Array<keyof typeof PLACEHOLDER_CODE>;
const insertCodeUnderGrant = (db: AfterNewGrant) => db
  .insertInto('authorization_codes').columns(CODE_COLUMNS)
  .expression((eb) => eb.selectFrom('g').select((s) => CODE_COLUMNS.map((column) =>
    column === 'grant_id' ? s.ref('g.id').as(column) : s.val(PLACEHOLDER_CODE[column]).as(column))));
/** A new grant and its code in one statement (PostgreSQL): the grant's columns, then the code's but `grant_id`. */
const insertCodeUnderNewGrant = (db: Kysely<Database>) => insertCodeUnderGrant(db
  .with('g', (w) => w.insertInto('grants').values(NEW_GRANT).returning('id')));
const GRANT_COLUMNS = Object.keys(NEW_GRANT) as Array<keyof typeof NEW_GRANT>;
/**
 * `insertCodeUnderNewGrant`, only while the user's account is active and the user's consent for
 * the client holds every scope of the code (PostgreSQL): the user first, then the grant's columns
 * selected from the consent's row, then its user, client and the code's scope, then the code's
 * columns but `grant_id`. A scope is a list separated by single spaces (`formatScope`); the `@>`
 * is `holdsEveryScope` in SQL, an empty one held by any consent.
 *
 * Both rows are locked until the statement commits, the account's first: its `exists` is an
 * uncorrelated subquery, which PostgreSQL runs once, as the filter before the consent's scan.
 * - The account's row as `UserStore.holdActive` holds it, `FOR NO KEY UPDATE`: a deletion or
 *   suspension that has changed the status and not yet committed is waited for (then the row, no
 *   longer active, writes nothing); one that comes after waits for this statement, then its erase
 *   or revoking UPDATE sees the new grant. Without it the grant and code of a deletion's last
 *   moment were left behind, unusable and never deleted.
 * - The consent's row, `FOR NO KEY UPDATE` too: of PostgreSQL's row locks (docs, "Explicit
 *   Locking", table "Conflicting Row-Level Locks") it conflicts with the withdrawal's and the
 *   deletion's DELETE (which takes FOR UPDATE), so a withdrawal that has deleted the row and not
 *   yet committed is waited for (and the row, gone, writes nothing), and one that comes after waits
 *   for this statement, then its revoking UPDATE sees the new grant (without a lock the statement
 *   read the consent as of its snapshot and wrote a grant the withdrawal's UPDATE never saw:
 *   test/security/attack78-remembered-consent-race.test.ts). It also conflicts with itself, so
 *   each authorization queues in the lock manager behind a DELETE already waiting; FOR SHARE and
 *   FOR KEY SHARE join the share locks already on the row past it (PostgreSQL's README.tuplock),
 *   and a stream of overlapping authorizations kept the DELETE waiting. It leaves the FOR KEY
 *   SHARE of a foreign key's check alone, which FOR UPDATE would block for nothing.
 */
const insertCodeUnderConsent = (db: Kysely<Database>) => insertCodeUnderGrant((db
  .with('held', (w) => w.selectFrom('users').select('users.id').where('users.id', '=', 0).where(sql<boolean>`users.status = 'active'`).forNoKeyUpdate())
  .with('g', (w) => w.insertInto('grants').columns(GRANT_COLUMNS)
    .expression((eb) => eb.selectFrom('consents').select((s) => GRANT_COLUMNS.map((column) => s.val(NEW_GRANT[column]).as(column)))
      .where((e) => e.exists(e.selectFrom('held').select('held.id')))
      .where('consents.user_id', '=', 0).where('consents.client_id', '=', '')
      .where(sql<boolean>`string_to_array(consents.scope, ' ') @> string_to_array(${''}, ' ')`)
      .forNoKeyUpdate())
    .returning('id'))) as unknown as AfterNewGrant);
/**
 * The consuming write: the code changes only when it is unused, unexpired and presented with
 * everything it is bound to (client, redirect URI, PKCE challenge; `is not distinct from`, so a
 * code without a challenge matches only a request without a verifier; and the DPoP key of
 * `dpop_jkt` when the authorization request named one, RFC 9449 10).
 */
const consumeCodeWhere = (db: QueryCreator<Database>) => db.updateTable('authorization_codes').set({ used_at: 0 })
  .where('code_hash', '=', '').where('client_id', '=', '').where('redirect_uri', '=', '').where('expires_at', '>', 0)
  .where(sql<boolean>`code_challenge is not distinct from ${''}`)
  .where(sql<boolean>`(dpop_jkt is null or dpop_jkt = ${''})`)
  .where('used_at', 'is', null);
const consumeCode = (db: QueryCreator<Database>) => consumeCodeWhere(db).returningAll();
const codeConsumption = consumedWithGrant(consumeCode);
/**
 * SQLite: `consumeCode`, answering whether the consumed code's grant is live (unrevoked, its user
 * active), as `consumeIssuing` decides it on PostgreSQL: one statement where the consumed row and
 * a read of its grant took two.
 */
const consumeCodeSayingLive = (db: Kysely<Database>) => consumeCodeWhere(db).returning((eb) => grantIsLive(eb, 'authorization_codes.grant_id').as('live'));

const codeByHash = (db: Kysely<Database>) => db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', '');
const codeLookup = storedWithGrantByKey<Selectable<AuthorizationCodesTable>>('authorization_codes', 'code_hash');

/**
 * A code's redemption in one statement (PostgreSQL): `consumeCode` (its seven parameters), then
 * the access token's row and the refresh token's, stored only when the write consumed the code
 * and its grant is live (not revoked, its user active, as `CodeRedemption.refusal` reads them),
 * then the grant's "last used" (the time twice, and whether it is due: `CodeIssuance.touchGrant`);
 * answers a row when it consumed the code, with `issued` alone: the read before it gave the rest,
 * and a refusal reads the grant again (decision 58: the consumed row with its grant and user as
 * JSON and 27 columns cost PostgreSQL and our process about 40 µs each a redemption).
 */
const consumeIssuing: QueryBuilder<ConsumedIssuing> = (db) => (db as unknown as Kysely<any>)
  .with('c', consumeCode as never)
  .with('live', (w) => w.selectFrom('c').select('c.grant_id').where((eb) => grantIsLive(eb, 'c.grant_id')))
  .with('access', insertTokenIfLive('access_tokens'))
  .with('refresh', (w) => insertTokenIfLive('refresh_tokens')(w).returning('id'))
  // The grant's "last used" (its time, moved forward only as `touchGrant` moves it, then whether
  // it is due), in the same statement: written after the commit, a write that failed (a row held
  // past statement_timeout) answered an error for a code already used, whose retry was then a
  // reuse (attack78).
  .with('touched', touchLiveGrant)
  .selectFrom('c').select(sql<boolean>`exists (select 1 from refresh)`.as('issued'));
type ConsumedIssuing = { issued: boolean };

const NOT_CONSUMED = { kind: 'not_consumed' } as const;

/** `consumeCode`'s parameters, in the order of its compiled SQL. */
function consumeParameters(presented: PresentedCode, now: Instant): unknown[] {
  return [now, presented.codeHash, presented.clientId, presented.redirectUri, now, presented.codeChallenge, presented.dpopJkt ?? null];
}

function insertRow(db: Kysely<Database>, queries: CompiledQueries, code: NewCode) {
  return queries.execute(db, insertCode, Object.values(codeValues(code)));
}

/** SQLite: the grant (`grant`, `createGrant`'s parameters), then the code under it; in the caller's transaction. */
async function insertGrantThenCode(trx: Kysely<Database>, queries: CompiledQueries, grant: unknown[], code: Omit<NewCode, 'grantId'>): Promise<void> {
  const created = await queries.first(trx, createGrant, grant);
  await insertRow(trx, queries, { ...code, grantId: created!.id });
}

export class KyselyCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async insert(code: NewCode): Promise<void> {
    await insertRow(this.db, this.queries, code);
  }

  async insertUnderNewGrant(code: Omit<NewCode, 'grantId'> & { amr?: readonly string[] | null }, sid: string | null): Promise<void> {
    const grant = Object.values(grantValues({ ...code, sid }, code.createdAt));
    if (this.queries.writesCombine) {
      await this.queries.execute(this.db, insertCodeUnderNewGrant, [...grant, ...Object.values(valuesBesideGrant(code))]);
      return;
    }
    // SQLite: committed with the other transactions of its turn (`SqliteGroupCommit`).
    await this.queries.transaction(this.db, (trx) => insertGrantThenCode(trx, this.queries, grant, code));
  }

  async insertUnderRememberedConsent(code: Omit<NewCode, 'grantId'> & { amr?: readonly string[] | null }, sid: string | null): Promise<boolean> {
    const grant = Object.values(grantValues({ ...code, sid }, code.createdAt));
    if (this.queries.writesCombine) {
      const result = await this.queries.execute(this.db, insertCodeUnderConsent, [code.userId, ...grant, code.userId, code.clientId, code.scope, ...Object.values(valuesBesideGrant(code))]);
      return Number(result.numAffectedRows ?? 0n) === 1;
    }
    // SQLite: the account and the consent read in the transaction that writes, which holds the one connection.
    return this.queries.transaction(this.db, async (trx) => {
      if (!(await new KyselyUserStore(trx, this.queries).holdActive(code.userId))) return false;
      const consent = await new KyselyConsentStore(trx, this.queries).find(code.userId, code.clientId);
      if (!holdsEveryScope(consent?.scope, scopeList(code.scope))) return false;
      await insertGrantThenCode(trx, this.queries, grant, code);
      return true;
    });
  }

  async consume(presented: PresentedCode, now: Instant): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    // One conditional write: the row changes only for the first caller (RFC 6749 4.1.2).
    const consumed = await consumeWithGrant(this.db, this.queries, codeConsumption, consumeParameters(presented, now));
    return consumed && { code: toCode(consumed.row), granted: consumed.granted };
  }

  /**
   * The code, its grant and user read first, the tokens made and the id_token signed from that
   * read with no transaction open, then the write that consumes the code and stores the tokens
   * (`consumeAndStore`): on PostgreSQL two round trips where a transaction took four, and no row is
   * held locked while the id_token is signed; on SQLite no group holds the one connection while a
   * signature runs on libuv's pool (decision 68, as a refresh's rotation). The read decides
   * nothing: the write checks all again. A code used or unknown when read is not written to.
   */
  async redeem<T>(presented: PresentedCode, now: Instant, how: CodeRedemption<T>): Promise<Redemption<T>> {
    const found = await this.readForRedemption(presented.codeHash);
    if (found === undefined || found.code.usedAt !== null) return NOT_CONSUMED;
    const reason = how.refusal(found.granted);
    if (reason !== undefined) {
      // As the write would: the code is consumed all the same, and stays used.
      const consumed = await this.consume(presented, now);
      return consumed ? { kind: 'refused', reason: how.refusal(consumed.granted) ?? reason } : NOT_CONSUMED;
    }
    const issuance = await how.issue(found.code, found.granted!);
    if (issuance === undefined) return NOT_CONSUMED;
    const written = await this.consumeAndStore(presented, now, issuance);
    if (written === undefined) return NOT_CONSUMED;
    if (!written.issued) {
      // Consumed, not issued: the grant was revoked or its user changed since the read, as
      // `refusal` says of them read again (the write decided; the reading only words it). A read
      // that fails loses the wording, not the answer: an outage's 503 would tell the app to try
      // again a code now used, which is then a replay that ends the grant (RFC 6749 4.1.2). The
      // failure is logged all the same: the answer hides it, the operator must not miss it.
      const reread = await this.readForRedemption(presented.codeHash).catch((error: unknown) => {
        this.queries.absorbed(error, 'the read that words a refused code redemption failed; answered invalid_grant without its reason', how.log);
        return undefined;
      });
      return { kind: 'refused', reason: (reread && how.refusal(reread.granted)) ?? 'The authorization can no longer be used.' };
    }
    return { kind: 'issued', answer: issuance.answer };
  }

  /**
   * A code with its grant and user, as a redemption reads them before it writes: on PostgreSQL
   * one lookup, sent with the other token requests of the turn; on SQLite the code, then its grant
   * (each statement runs at once when no transaction holds the connection).
   */
  private async readForRedemption(codeHash: string): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined> {
    if (this.queries.writesCombine) {
      const found = await this.queries.lookup(this.db, codeHash, codeLookup);
      return found && { code: toCode(found.stored), granted: toGrantWithUser(found) };
    }
    const code = await this.find(codeHash);
    return code && { code, granted: await new KyselyGrantStore(this.db, this.queries).findWithUser(code.grantId) };
  }

  /**
   * The consuming write, and when it consumed the code and its grant is still live (not revoked,
   * its user active), the tokens and the grant's last use: on PostgreSQL one statement
   * (`consumeIssuing`) committed alone; on SQLite a transaction, committed with the others of its
   * group. Whether it issued them; nothing when it did not consume the code. A code consumed whose
   * grant ended since the read stays used.
   */
  private async consumeAndStore(presented: PresentedCode, now: Instant, issuance: CodeIssuance<unknown>): Promise<ConsumedIssuing | undefined> {
    if (this.queries.writesCombine) {
      // Run again as PostgreSQL's deadlock victim, as a transaction is: an account's deletion holds the
      // grant this write waits to mark used, then erases it, and so wants the code this write took.
      return aloneRetried(() => this.queries.first(this.db, consumeIssuing, [
        ...consumeParameters(presented, now), ...Object.values(tokenValues(issuance.access)), ...Object.values(tokenValues(issuance.refresh)),
        now, now, issuance.touchGrant,
      ]));
    }
    return this.queries.transaction(this.db, async (trx) => {
      const consumed = await this.queries.first(trx, consumeCodeSayingLive, consumeParameters(presented, now));
      if (consumed === undefined) return undefined;
      if (!consumed.live) return { issued: false };
      await new KyselyTokenStore(trx, this.queries).insertPair(issuance.access, issuance.refresh);
      if (issuance.touchGrant) await new KyselyGrantStore(trx, this.queries).touch(issuance.access.grantId, now);
      return { issued: true };
    });
  }

  async find(codeHash: string): Promise<AuthorizationCode | undefined> {
    const row = await this.queries.first(this.db, codeByHash, [codeHash]);
    return row && toCode(row);
  }
}
