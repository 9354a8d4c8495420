/**
 * Starts on PostgreSQL as operators set them up (attack helper-72): the service's schema is the
 * current schema, the first of `search_path` that exists, and the database may hold other
 * applications' schemas. Each test fails on the code before its mend (helper-72's on 22d8ce9,
 * helper-74's on 8cbf510).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../../src/storage/database.js';
import { migrateToLatest, tablesSchema } from '../../src/storage/migrate.js';
import { dropSchema, postgresUrl, withSearchPath } from '../support/databases.js';

/** Kysely's own migration lock: one advisory lock id for every Kysely application of a database. */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

describe('PostgreSQL starts beside other schemas', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set: PostgreSQL test skipped' }, () => {
  const prefix = `t_${process.pid}_${randomBytes(3).toString('hex')}`;
  const made: string[] = [];
  let admin: pg.Client;
  const schema = async (name: string) => {
    const full = `${prefix}_${name}`;
    made.push(full);
    await admin.query(`create schema ${full}`);
    return full;
  };
  const migrate = async (url: string) => {
    const handle = openDatabase({ kind: 'postgres', url });
    try {
      await handle.inMigrationTurn((db) => migrateToLatest(db));
    } finally {
      await handle.close();
    }
  };
  before(async () => {
    admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
  });
  after(async () => {
    for (const name of made) await dropSchema(admin, name);
    await admin.end();
  });

  test('a schema made later ahead of the migrated one on the search path ("$user" of "$user", public) is not given a second, empty set of tables', async () => {
    // The deployment's tables are in `home`; a DBA then makes the schema search_path names first
    // (PostgreSQL 15's advice: CREATE SCHEMA svc AUTHORIZATION svc). The next start made every
    // table anew there and served an empty service: no account, no app, new signing keys.
    const home = await schema('home');
    const ahead = `${prefix}_ahead`;
    const url = withSearchPath(postgresUrl!, `${ahead},${home}`);
    await migrate(url);
    await schema('ahead');
    const handle = openDatabase({ kind: 'postgres', url });
    try {
      await assert.rejects(handle.inMigrationTurn((db) => migrateToLatest(db)),
        new RegExp(`the service's tables are in schema "${home}", but schema "${ahead}", which holds none of them, now comes first .*search_path%3D${home}`));
    } finally {
      await handle.close();
    }
    const { rows } = await admin.query('select count(*)::int as tables from pg_tables where schemaname = $1', [ahead]);
    assert.equal(rows[0].tables, 0, `a start made ${rows[0].tables} tables in ${ahead} beside the deployment's in ${home}`);
  });

  test('the schema ahead holding another application\'s Kysely migrations does not hide that the service\'s tables are in a later one', async () => {
    const home = await schema('home_behind');
    const theirs = await schema('theirs');
    const url = withSearchPath(postgresUrl!, `${theirs},${home}`);
    await admin.query(`create table ${theirs}.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null); insert into ${theirs}.kysely_migration values ('2020-01-01-other-app', '2020-01-01T00:00:00Z')`);
    await migrate(withSearchPath(postgresUrl!, home));
    const handle = openDatabase({ kind: 'postgres', url });
    try {
      await assert.rejects(handle.inMigrationTurn((db) => migrateToLatest(db)), new RegExp(`the service's tables are in schema "${home}", but schema "${theirs}"`));
    } finally {
      await handle.close();
    }
    const { rows } = await admin.query('select tablename from pg_tables where schemaname = $1', [theirs]);
    assert.deepEqual(rows.map((row) => row.tablename), ['kysely_migration'], 'nothing made in the other application\'s schema');
  });

  test('another role\'s deployment later on the search path, which this role may read, is no reason to refuse a start of its own', async () => {
    const [owner, reader] = [`${prefix}_owner`, `${prefix}_reader`];
    const [theirs, mine] = [`${prefix}_owners_home`, `${prefix}_readers_home`];
    const as = (role: string, path: string) => { const url = new URL(withSearchPath(postgresUrl!, path)); url.username = role; url.password = 'pw'; return url.toString(); };
    await admin.query(`create role ${owner} login password 'pw'; create role ${reader} login password 'pw';
      create schema ${theirs} authorization ${owner}; create schema ${mine} authorization ${reader}`);
    try {
      await migrate(as(owner, theirs));
      await admin.query(`grant usage on schema ${theirs} to ${reader}; grant select on ${theirs}.kysely_migration to ${reader}`);
      const handle = openDatabase({ kind: 'postgres', url: as(reader, `${mine},${theirs}`) });
      try {
        await handle.inMigrationTurn((db) => migrateToLatest(db));
        assert.equal(await tablesSchema(handle.db), mine);
      } finally {
        await handle.close();
      }
    } finally {
      await admin.query(`drop schema if exists ${theirs} cascade; drop schema if exists ${mine} cascade; drop owned by ${owner}; drop owned by ${reader}; drop role ${owner}; drop role ${reader}`);
    }
  });

  test('a search path naming no schema that exists is refused, saying to create one', async () => {
    const handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, `${prefix}_never_made`) });
    try {
      await assert.rejects(handle.inMigrationTurn((db) => migrateToLatest(db)), /^Error: no schema on DATABASE_URL's search path exists that the role may use \(search_path: t_\w+_never_made\): create the schema/);
    } finally {
      await handle.close();
    }
  });

  for (const system of ['pg_catalog', 'pg_temp']) {
    test(`a search path naming PostgreSQL's own ${system} first is refused, with nothing made anywhere`, async () => {
      // pg_catalog failed on a permission with no advice; pg_temp made the tables in the
      // connection's temporary schema, which vanished with it, and failed at the trigger's migration.
      const home = await schema(`after_${system}`);
      const handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, `${system},${home}`) });
      try {
        await assert.rejects(handle.inMigrationTurn((db) => migrateToLatest(db)),
          new RegExp(`^Error: schema "${system}\\w*", which comes first on the search path .* is PostgreSQL's own: the service's tables cannot be kept there`));
      } finally {
        await handle.close();
      }
      const { rows } = await admin.query('select count(*)::int as tables from pg_tables where schemaname = $1', [home]);
      assert.equal(rows[0].tables, 0);
    });
  }

  test('a role that may not create tables in its schema is told the grants that let it', async () => {
    // PostgreSQL 15's default: only the database's owner creates in public.
    const locked = await schema('locked');
    const role = `${prefix}_role`;
    await admin.query(`create role ${role} login password 'pw'; grant usage on schema ${locked} to ${role}`);
    const url = new URL(withSearchPath(postgresUrl!, locked));
    url.username = role;
    url.password = 'pw';
    const handle = openDatabase({ kind: 'postgres', url: url.toString() });
    try {
      await assert.rejects(handle.inMigrationTurn((db) => migrateToLatest(db)),
        new RegExp(`permission denied for schema ${locked}: the database role may not create tables in schema "${locked}"\\. Make the role its owner, grant it create on schema ${locked}`));
    } finally {
      await handle.close();
      await admin.query(`drop schema ${locked} cascade; drop role ${role}`);
    }
  });

  test('the published-post count a trigger keeps is the service\'s own, whatever search_path the session that changes a post has', async () => {
    // posts_published_count() names `users` unqualified: run from psql (search_path "$user",
    // public) it updated another application's `users` in public, or failed the operator's update.
    const ours = await schema('ours');
    const other = await schema('other');
    await migrate(withSearchPath(postgresUrl!, ours));
    await admin.query(`create table ${other}.users (id integer primary key, published_posts integer not null default 0); insert into ${other}.users values (1, 0)`);
    await admin.query(`insert into ${ours}.users (id, username, username_key, password_hash, member, created_at, updated_at) values (1, 'alice', 'alice', 'x', true, 0, 0)`);
    await admin.query(`insert into ${ours}.categories (id, name, name_key) values (1, 'General', 'general') on conflict do nothing`);
    await admin.query(`insert into ${ours}.posts (id, author_id, category_id, title, body, status, created_at, updated_at) values (1, 1, 1, 't', 'b', 'draft', 0, 0)`);
    const session = new pg.Client({ connectionString: withSearchPath(postgresUrl!, other) });
    await session.connect();
    try {
      await session.query(`update ${ours}.posts set status = 'published' where id = 1`).catch(() => {});
    } finally {
      await session.end();
    }
    const theirs = await admin.query(`select published_posts from ${other}.users where id = 1`);
    assert.equal(theirs.rows[0].published_posts, 0, 'another schema\'s users row was changed by the service\'s trigger');
    const mine = await admin.query(`select published_posts from ${ours}.users where id = 1`);
    assert.equal(mine.rows[0].published_posts, 1);
  });

  test('another Kysely application migrating in its own schema of the database does not hold a start up', async () => {
    // Kysely's migrator takes one database-wide advisory lock whatever the schema, and waits for
    // it up to an hour (its own lock_timeout, over the service's 5 s), saying nothing.
    const fresh = await schema('fresh');
    const holder = new pg.Client({ connectionString: postgresUrl });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1)', [KYSELY_MIGRATION_LOCK]);
    const handle = openDatabase({ kind: 'postgres', url: withSearchPath(postgresUrl!, fresh) });
    const migrated = handle.inMigrationTurn((db) => migrateToLatest(db));
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        migrated.then(() => 'migrated', (error: Error) => `failed: ${error.message}`),
        new Promise<string>((resolve) => { timer = setTimeout(resolve, 20_000, 'still waiting after 20 s'); }),
      ]);
      assert.equal(outcome, 'migrated');
    } finally {
      clearTimeout(timer);
      await holder.query('select pg_advisory_unlock($1)', [KYSELY_MIGRATION_LOCK]);
      await holder.end();
      await migrated.catch(() => {});
      await handle.close();
    }
  });

  test('a lock held on the deployment\'s kysely_migration does not let a start make a second, empty set of tables in a schema ahead of it', async () => {
    // The check reads each later schema's kysely_migration and takes any error as "not ours":
    // a VACUUM FULL, CLUSTER or LOCK TABLE on it for the 5 s of lock_timeout made the start
    // migrate the empty schema ahead, and serve an empty service from it.
    const home = await schema('locked_home');
    await migrate(withSearchPath(postgresUrl!, home));
    const ahead = await schema('ahead_of_locked');
    const holder = new pg.Client({ connectionString: postgresUrl });
    await holder.connect();
    try {
      await holder.query(`begin; lock table ${home}.kysely_migration in access exclusive mode`);
      await migrate(withSearchPath(postgresUrl!, `${ahead},${home}`)).catch(() => {});
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const { rows } = await admin.query('select count(*)::int as tables from pg_tables where schemaname = $1', [ahead]);
    assert.equal(rows[0].tables, 0, `a start made ${rows[0].tables} tables in ${ahead} beside the deployment's in ${home}`);
  });

  test('the search path the refusal advises finds a schema whose name needs quoting', async () => {
    // The advice put the name in search_path unquoted: PostgreSQL folds it to lower case, and
    // the start then said no schema on the search path exists, and to create one.
    const home = `${prefix}_Quoted`;
    made.push(`"${home}"`);
    await admin.query(`create schema "${home}"`);
    await migrate(withSearchPath(postgresUrl!, `"${home}"`));
    const ahead = await schema('ahead_of_quoted');
    const refusal = await migrate(withSearchPath(postgresUrl!, `${ahead},"${home}"`)).then(() => undefined, (error: Error) => error.message);
    const advised = /\(options=(\S+)\)$/.exec(refusal ?? '')?.[1];
    assert.ok(advised, `no search path advised: ${refusal}`);
    const url = new URL(postgresUrl!);
    url.searchParams.set('options', decodeURIComponent(advised));
    const handle = openDatabase({ kind: 'postgres', url: url.toString() });
    try {
      await handle.inMigrationTurn((db) => migrateToLatest(db));
      assert.equal(await tablesSchema(handle.db), home);
    } finally {
      await handle.close();
    }
  });
});
