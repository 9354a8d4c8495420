import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Client, ClientChanger, ClientDetails, ClientStatus, ClientStore, ClientType, NewClient, ReviewedClient, VerifiedMark } from '../../../core/oauth/ports.js';
import type { IdTokenAlg } from '../../../core/oidc/ports.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, keyIsAnyOf } from '../../database.js';
import type { ClientsTable, Database } from '../../schema.js';

function toClient(row: Selectable<ClientsTable>): Client {
  return {
    clientId: row.client_id,
    name: row.name,
    description: row.description,
    homepageUrl: row.homepage_url,
    ownerId: row.owner_id,
    type: row.type as ClientType,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    allowedScopes: row.allowed_scopes === '' ? [] : row.allowed_scopes.split(' '),
    status: row.status as ClientStatus,
    secretHash: row.secret_hash,
    previousSecret: row.previous_secret_hash === null || row.previous_secret_expires_at === null
      ? null : { hash: row.previous_secret_hash, expiresAt: Number(row.previous_secret_expires_at) },
    idTokenAlg: row.id_token_alg as IdTokenAlg,
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    backchannelLogoutUri: row.backchannel_logout_uri,
    requirePushedAuthorizationRequests: Boolean(row.require_pushed_authorization_requests),
    selfRegistered: Boolean(row.self_registered),
    memberRegistered: Boolean(row.member_registered),
    verifiedAt: row.verified_at === null ? null : Number(row.verified_at),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const clientById = (db: Kysely<Database>) => db.selectFrom('clients').selectAll().where('client_id', '=', '');
const clientsByIds = (db: Kysely<Database>) => db.selectFrom('clients').selectAll().where(keyIsAnyOf('client_id'));
/**
 * Every authorization request and token request looks its client up, then writes: remembered on
 * SQLite (`CompiledQueries.lookup`), since those writes go to other tables (tokens, codes, grants)
 * and leave the row standing; a write to `clients` (a secret rotated, a client deactivated), to a
 * table that cascades into it, or any commit of another instance reads it again (`SqliteWriteWatch`).
 */
const clientLookup = { one: clientById, many: clientsByIds, keyOf: (row: { client_id: string }) => row.client_id, remember: true } as const;

function newRow(client: NewClient, now: Instant) {
  return {
    client_id: client.clientId,
    name: client.name,
    description: client.description,
    homepage_url: client.homepageUrl,
    owner_id: client.ownerId,
    type: client.type,
    redirect_uris: JSON.stringify(client.redirectUris),
    allowed_scopes: client.allowedScopes.join(' '),
    status: 'active',
    secret_hash: client.secretHash,
    id_token_alg: client.idTokenAlg,
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris ?? []),
    backchannel_logout_uri: client.backchannelLogoutUri ?? null,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests ? 1 : 0,
    self_registered: client.selfRegistered ? 1 : 0,
    member_registered: client.memberRegistered ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Whether the row holds exactly these of what staff review (its name, description, homepage and addresses, the
 * addresses as stored JSON): a condition of the write it is part of, which reads the row as it was
 * before the write. Columns are named with their table, as an upsert's update must; '' stands for
 * no back-channel URI (none is empty), so that both databases compare a null alike.
 */
function rowHolds(reviewed: Partial<ReviewedClient>): RawBuilder<boolean> {
  const conditions = [
    ...(reviewed.name === undefined ? [] : [sql`clients.name = ${reviewed.name}`]),
    ...(reviewed.description === undefined ? [] : [sql`clients.description = ${reviewed.description}`]),
    ...(reviewed.homepageUrl === undefined ? [] : [sql`clients.homepage_url = ${reviewed.homepageUrl}`]),
    ...(reviewed.redirectUris ? [sql`clients.redirect_uris = ${JSON.stringify(reviewed.redirectUris)}`] : []),
    ...(reviewed.postLogoutRedirectUris ? [sql`clients.post_logout_redirect_uris = ${JSON.stringify(reviewed.postLogoutRedirectUris)}`] : []),
    ...(reviewed.backchannelLogoutUri === undefined ? [] : [sql`coalesce(clients.backchannel_logout_uri, '') = ${reviewed.backchannelLogoutUri ?? ''}`]),
  ];
  return sql<boolean>`${sql.join(conditions, sql` and `)}`;
}

/**
 * A staff verification ended, by a `case` of the write that changes what staff saw, unless the
 * row holds it `unchanged` (saved again as it was): staff vouched for what they saw (attack85, attack87).
 */
function verificationEndsUnless(unchanged: RawBuilder<boolean>) {
  return { verified_at: sql<number | null>`case when ${unchanged} then clients.verified_at else null end` };
}

/**
 * What an owner's change of a client's addresses also sets, by `case`s of the same write: the app
 * marked as the member's unless the addresses browsers are sent to are `unchangedForBrowsers`, its
 * staff verification ended unless every address staff saw is `unchanged` (attack84, attack85).
 */
function ownersClaimUnless(unchangedForBrowsers: RawBuilder<boolean>, unchanged = unchangedForBrowsers) {
  return {
    member_registered: sql<number | boolean>`case when ${unchangedForBrowsers} then clients.member_registered else ${1} end`,
    ...verificationEndsUnless(unchanged),
  };
}

export class KyselyClientStore implements ClientStore {
  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {}

  async create(client: NewClient, now: Instant): Promise<Client> {
    const row = await this.db.insertInto('clients').values(newRow(client, now)).returningAll().executeTakeFirstOrThrow();
    return toClient(row);
  }

  async saveDescribed(client: NewClient, now: Instant): Promise<void> {
    await this.db.insertInto('clients').values(newRow(client, now)).onConflict((conflict) => conflict.column('client_id').doUpdateSet({
      name: client.name,
      homepage_url: client.homepageUrl,
      redirect_uris: JSON.stringify(client.redirectUris),
      post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris ?? []),
      // A document naming another name, homepage or addresses than staff saw ends their verification.
      ...verificationEndsUnless(rowHolds({
        name: client.name, homepageUrl: client.homepageUrl, redirectUris: client.redirectUris, postLogoutRedirectUris: client.postLogoutRedirectUris ?? [],
      })),
      updated_at: now,
    })).execute();
  }

  async findById(clientId: string): Promise<Client | undefined> {
    const row = await this.queries.lookup(this.db, clientId, clientLookup);
    return row && toClient(row);
  }

  async listByOwner(ownerId: number): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().where('owner_id', '=', ownerId)
      .orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClient);
  }

  async countActiveByOwner(ownerId: number): Promise<number> {
    const row = await this.db.selectFrom('clients').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', ownerId).where('status', '=', 'active').executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async memberRegisteredSince(ownerId: number, since: Instant, limit: number): Promise<Instant[]> {
    const rows = await this.db.selectFrom('clients').select('created_at').where('owner_id', '=', ownerId)
      // 1: PostgreSQL reads it as true.
      .where('member_registered', '=', 1).where('created_at', '>', since)
      .orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map((row) => Number(row.created_at));
  }

  async listAll(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClient);
  }

  async rotateSecret(clientId: string, secretHash: string, previousExpiresAt: Instant | null, now: Instant): Promise<boolean> {
    // The right-hand sides read the row as it was (SQL's UPDATE semantics on both databases): the
    // previous secret becomes the one being replaced, unless none is kept.
    const result = await this.db.updateTable('clients').set((eb) => ({
      previous_secret_hash: previousExpiresAt === null ? null : eb.ref('secret_hash'),
      previous_secret_expires_at: previousExpiresAt,
      secret_hash: secretHash,
      updated_at: now,
    })).where('client_id', '=', clientId).where('type', '=', 'confidential').where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deletePreviousSecret(clientId: string, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('clients')
      .set({ previous_secret_hash: null, previous_secret_expires_at: null, updated_at: now })
      .where('client_id', '=', clientId).where('status', '=', 'active').where('previous_secret_expires_at', '>', now).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setRedirectUris(clientId: string, redirectUris: string[], now: Instant, changedBy: ClientChanger): Promise<boolean> {
    const result = await this.db.updateTable('clients')
      .set({ redirect_uris: JSON.stringify(redirectUris), updated_at: now, ...(changedBy === 'owner' ? ownersClaimUnless(rowHolds({ redirectUris })) : {}) })
      .where('client_id', '=', clientId).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setLogoutUris(clientId: string, uris: { postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null }, now: Instant, changedBy: ClientChanger): Promise<boolean> {
    const result = await this.db.updateTable('clients')
      .set({
        post_logout_redirect_uris: JSON.stringify(uris.postLogoutRedirectUris), backchannel_logout_uri: uris.backchannelLogoutUri, updated_at: now,
        ...(changedBy === 'owner' ? ownersClaimUnless(rowHolds({ postLogoutRedirectUris: uris.postLogoutRedirectUris }), rowHolds(uris)) : {}),
      })
      .where('client_id', '=', clientId).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setDetails(clientId: string, details: ClientDetails, now: Instant, changedBy: ClientChanger): Promise<boolean> {
    const result = await this.db.updateTable('clients')
      .set({
        name: details.name, description: details.description, homepage_url: details.homepageUrl, updated_at: now,
        ...(changedBy === 'owner' ? verificationEndsUnless(rowHolds(details)) : {}),
      })
      .where('client_id', '=', clientId).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setRequirePushedAuthorizationRequests(clientId: string, required: boolean, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('clients')
      .set({ require_pushed_authorization_requests: required ? 1 : 0, updated_at: now })
      .where('client_id', '=', clientId).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setVerified(clientId: string, mark: VerifiedMark, now: Instant): Promise<Client | undefined> {
    const update = this.db.updateTable('clients').set({ verified_at: mark.verified ? now : null, updated_at: now }).where('client_id', '=', clientId);
    const row = await (mark.verified ? update.where(rowHolds(mark.reviewed)) : update).returningAll().executeTakeFirst();
    return row && toClient(row);
  }

  async setStatus(clientId: string, status: ClientStatus, now: Instant): Promise<Client | undefined> {
    const row = await this.db.updateTable('clients').set({ status, updated_at: now })
      .where('client_id', '=', clientId).returningAll().executeTakeFirst();
    return row && toClient(row);
  }
}
