/**
 * Issue 20: every author's number of published posts, kept with the user (`users.published_posts`)
 * by triggers on `posts`, so `/me/posts` reads its `totalElements` from one row instead of
 * counting the author's posts on every page (a tenth of a first page at 1,000 posts, half of it
 * at 10,000). Triggers keep the count in the same statement as the change to `posts`: no write
 * path of the application, the command line, the demo or a bulk load can forget it. Only a
 * change of `status` or `author_id` touches it; a counted view or like does not.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  // The triggers come before the first count, and all of it is one transaction, so a post that
  // another writer (an instance of the previous release, the command line) publishes meanwhile is
  // counted once: by the count if it committed before it, else by a trigger. On PostgreSQL the
  // migrator's transaction holds posts from `create trigger` on (a writer under way is waited for);
  // on SQLite, where the releases before attack63 migrated outside a transaction, this one opens
  // its own unless the migrator's holds the write lock already.
  const steps = async (trx: Kysely<any>) => {
    await trx.schema.alterTable('users').addColumn('published_posts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    if (sqlite) {
      await sql`create trigger posts_published_insert after insert on posts when new.status = 'published'
        begin update users set published_posts = published_posts + 1 where id = new.author_id; end`.execute(trx);
      await sql`create trigger posts_published_delete after delete on posts when old.status = 'published'
        begin update users set published_posts = published_posts - 1 where id = old.author_id; end`.execute(trx);
      await sql`create trigger posts_published_update after update of status, author_id on posts
        when old.status = 'published' or new.status = 'published'
        begin
          update users set published_posts = published_posts - 1 where id = old.author_id and old.status = 'published';
          update users set published_posts = published_posts + 1 where id = new.author_id and new.status = 'published';
        end`.execute(trx);
    } else {
      await sql`create function posts_published_count() returns trigger language plpgsql as $$
        begin
          if tg_op in ('UPDATE', 'DELETE') and old.status = 'published' then
            update users set published_posts = published_posts - 1 where id = old.author_id;
          end if;
          if tg_op in ('INSERT', 'UPDATE') and new.status = 'published' then
            update users set published_posts = published_posts + 1 where id = new.author_id;
          end if;
          return null;
        end $$`.execute(trx);
      await sql`create trigger posts_published_count after insert or delete or update of status, author_id on posts
        for each row execute function posts_published_count()`.execute(trx);
    }
    await sql`update users set published_posts = (select count(*) from posts where posts.author_id = users.id and posts.status = 'published')`.execute(trx);
  };
  await (sqlite && !db.isTransaction ? db.transaction().execute(steps) : steps(db));
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  if (sqlite) {
    for (const name of ['posts_published_insert', 'posts_published_delete', 'posts_published_update']) await sql`drop trigger ${sql.raw(name)}`.execute(db);
  } else {
    await sql`drop trigger posts_published_count on posts`.execute(db);
    await sql`drop function posts_published_count()`.execute(db);
  }
  await db.schema.alterTable('users').dropColumn('published_posts').execute();
}
