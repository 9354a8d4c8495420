// A durable store for the peer (`npm run bench -- --peer-store sqlite`): node-oidc-provider's
// adapter interface over one SQLite file, set up as ours is (WAL, synchronous = NORMAL), so that a
// refresh or a code exchange of the peer commits to disk as ours does. The stock memory adapter
// changes objects in the heap and survives no restart; against it the refresh and code-flow
// ratios measure durability as much as the work of the server (docs/performance.md).
//
// One table for every model, as node-oidc-provider's example SQL adapters have it: the payload as
// JSON, with the columns its lookups need (grant, session uid, user code) indexed.
import Database from 'better-sqlite3';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export function sqliteAdapterFactory(path) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`create table if not exists oidc (
    model text not null, id text not null, payload text not null,
    grant_id text, uid text, user_code text, expires_at integer, consumed_at integer,
    primary key (model, id))`);
  db.exec('create index if not exists oidc_grant on oidc (grant_id)');
  db.exec('create index if not exists oidc_uid on oidc (model, uid)');
  db.exec('create index if not exists oidc_user_code on oidc (model, user_code)');
  const statements = {
    upsert: db.prepare(`insert into oidc (model, id, payload, grant_id, uid, user_code, expires_at)
      values (?, ?, ?, ?, ?, ?, ?)
      on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id,
        uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`),
    find: db.prepare('select payload, expires_at, consumed_at from oidc where model = ? and id = ?'),
    findByUid: db.prepare('select payload, expires_at, consumed_at from oidc where model = ? and uid = ?'),
    findByUserCode: db.prepare('select payload, expires_at, consumed_at from oidc where model = ? and user_code = ?'),
    consume: db.prepare('update oidc set consumed_at = ? where model = ? and id = ?'),
    destroy: db.prepare('delete from oidc where model = ? and id = ?'),
    revokeByGrantId: db.prepare('delete from oidc where grant_id = ?'),
  };

  /** The stored payload, with `consumed` as the memory adapter sets it; expired rows count as absent. */
  function payloadOf(row) {
    if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) return undefined;
    const payload = JSON.parse(row.payload);
    return row.consumed_at === null ? payload : { ...payload, consumed: row.consumed_at };
  }

  return (model) => ({
    async upsert(id, payload, expiresIn) {
      const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : null;
      const grantId = GRANTABLE.has(model) ? payload.grantId ?? null : null;
      statements.upsert.run(model, id, JSON.stringify(payload), grantId, payload.uid ?? null, payload.userCode ?? null, expiresAt);
    },
    async find(id) {
      return payloadOf(statements.find.get(model, id));
    },
    async findByUid(uid) {
      return payloadOf(statements.findByUid.get(model, uid));
    },
    async findByUserCode(userCode) {
      return payloadOf(statements.findByUserCode.get(model, userCode));
    },
    async consume(id) {
      statements.consume.run(Math.floor(Date.now() / 1000), model, id);
    },
    async destroy(id) {
      statements.destroy.run(model, id);
    },
    async revokeByGrantId(grantId) {
      statements.revokeByGrantId.run(grantId);
    },
  });
}
