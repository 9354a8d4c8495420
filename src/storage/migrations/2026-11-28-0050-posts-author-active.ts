/**
 * The home page's recent posts without walking a hidden author's: `posts.author_active` says
 * whether the post's author is active, kept by triggers in the same statement as the change to
 * `users.status` (or the post's insert), and `posts_recent` is keyed by (status, author_active,
 * created_at, id), so the published posts of active authors are one run of it, newest last.
 * Walking (status, created_at, id) and skipping each post of a member who is not active cost the
 * home page about 0.15 µs a skipped post on either database: a suspended member with 50,000
 * recent posts made every home page's read take 9.5 ms on SQLite and 6.8 on PostgreSQL
 * (docs/performance.md, decision 56).
 * Triggers, as for `users.published_posts` (migration 2026-11-23-0080): no write path of the
 * application, the command line, a release before this one or a bulk load can forget the flag.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  // The triggers come before the flags are set, and all of it is one transaction, so a status
  // another writer changes meanwhile is flagged once: by the update if it committed before it,
  // else by a trigger (as migration 2026-11-23-0080 counts posts).
  const steps = async (trx: Kysely<any>) => {
    await trx.schema.alterTable('posts')
      .addColumn('author_active', sqlite ? 'integer' : 'boolean', (c) => c.notNull().defaultTo(sqlite ? 1 : true))
      .execute();
    if (sqlite) {
      await sql`create trigger posts_author_status after update of status on users when new.status is not old.status
        begin update posts set author_active = new.status = 'active' where author_id = new.id; end`.execute(trx);
      // Written only when it differs: a post of an active author, nearly every one, costs no second write.
      for (const [name, event] of [['posts_author_active_insert', 'insert'], ['posts_author_active_update', 'update of author_id']]) {
        await sql`create trigger ${sql.raw(name!)} after ${sql.raw(event!)} on posts
          when new.author_active is not coalesce((select status = 'active' from users where id = new.author_id), 1)
          begin update posts set author_active = not author_active where id = new.id; end`.execute(trx);
      }
    } else {
      // Each function finds `posts` and `users` in the schema it lives in, whatever search path the
      // session changing a row has (as migration 2026-11-28-0040 set for posts_published_count).
      const { rows: [here] } = await sql<{ schema: string }>`select current_schema() as schema`.execute(trx);
      const searchPath = sql`set search_path = ${sql.id(here!.schema)}, pg_temp`;
      await sql`create function posts_author_status() returns trigger language plpgsql ${searchPath} as $$
        begin
          update posts set author_active = new.status = 'active' where author_id = new.id;
          return null;
        end $$`.execute(trx);
      await sql`create trigger posts_author_status after update of status on users
        for each row when (new.status is distinct from old.status) execute function posts_author_status()`.execute(trx);
      await sql`create function posts_author_active() returns trigger language plpgsql ${searchPath} as $$
        begin
          new.author_active := coalesce((select status = 'active' from users where id = new.author_id), true);
          return new;
        end $$`.execute(trx);
      await sql`create trigger posts_author_active before insert or update of author_id on posts
        for each row execute function posts_author_active()`.execute(trx);
    }
    await sql`update posts set author_active = ${sql.raw(sqlite ? '0' : 'false')}
      where author_id in (select id from users where status <> 'active')`.execute(trx);
    // Its one use, the home page (`listRecentPublished`), names both, so it walks no post of a
    // hidden author; the index it replaces led with the status alone.
    await trx.schema.dropIndex('posts_recent').execute();
    await trx.schema.createIndex('posts_recent').on('posts').columns(['status', 'author_active', 'created_at', 'id']).execute();
  };
  await (sqlite && !db.isTransaction ? db.transaction().execute(steps) : steps(db));
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.dropIndex('posts_recent').execute();
  await db.schema.createIndex('posts_recent').on('posts').columns(['status', 'created_at', 'id']).execute();
  if (sqlite) {
    for (const name of ['posts_author_status', 'posts_author_active_insert', 'posts_author_active_update']) await sql`drop trigger ${sql.raw(name)}`.execute(db);
  } else {
    await sql`drop trigger posts_author_status on users`.execute(db);
    await sql`drop function posts_author_status()`.execute(db);
    await sql`drop trigger posts_author_active on posts`.execute(db);
    await sql`drop function posts_author_active()`.execute(db);
  }
  await db.schema.alterTable('posts').dropColumn('author_active').execute();
}
