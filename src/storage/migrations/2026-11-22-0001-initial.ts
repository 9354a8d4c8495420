/**
 * Every table the service needs. Frozen in time: it takes `Kysely<any>` and imports nothing
 * from the application, so later changes to the code can never change what it did.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const instant = 'bigint';
  const bool = sqlite ? 'integer' : 'boolean';
  const blob = sqlite ? 'blob' : 'bytea';
  /** An integer key the database assigns. */
  const id = (t: any) =>
    sqlite
      ? t.addColumn('id', 'integer', (c: any) => c.primaryKey().autoIncrement())
      : t.addColumn('id', 'integer', (c: any) => c.primaryKey().generatedByDefaultAsIdentity());

  await id(db.schema.createTable('users'))
    .addColumn('username', 'text', (c: any) => c.notNull())
    .addColumn('username_key', 'text', (c: any) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c: any) => c.notNull())
    .addColumn('status', 'text', (c: any) =>
      c.notNull().defaultTo('active').check(sql`status in ('active', 'suspended', 'banned', 'deleted')`))
    .addColumn('bio', 'text', (c: any) => c.notNull().defaultTo(''))
    .addColumn('member', bool, (c: any) => c.notNull())
    .addColumn('level', 'integer', (c: any) => c.notNull().defaultTo(1))
    .addColumn('xp', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .addColumn('updated_at', instant, (c: any) => c.notNull())
    .execute();

  await db.schema.createTable('avatars')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('image', blob, (c) => c.notNull())
    .addColumn('updated_at', instant, (c) => c.notNull())
    .execute();

  await id(db.schema.createTable('categories'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('name_key', 'text', (c: any) => c.notNull().unique())
    .execute();

  await id(db.schema.createTable('posts'))
    .addColumn('author_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('category_id', 'integer', (c: any) => c.notNull().references('categories.id'))
    .addColumn('title', 'text', (c: any) => c.notNull())
    .addColumn('body', 'text', (c: any) => c.notNull())
    .addColumn('status', 'text', (c: any) => c.notNull().check(sql`status in ('published', 'draft')`))
    .addColumn('like_count', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('comment_count', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('view_count', 'integer', (c: any) => c.notNull().defaultTo(0))
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .addColumn('updated_at', instant, (c: any) => c.notNull())
    .execute();
  // The author's published posts, newest first, ties by id (INTERFACE section 7).
  await db.schema.createIndex('posts_by_author').on('posts')
    .columns(['author_id', 'status', 'created_at', 'id']).execute();
  await db.schema.createIndex('posts_recent').on('posts').columns(['status', 'created_at', 'id']).execute();

  await db.schema.createTable('post_likes')
    .addColumn('post_id', 'integer', (c) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', instant, (c) => c.notNull())
    .addPrimaryKeyConstraint('post_likes_pk', ['post_id', 'user_id'])
    .execute();

  await id(db.schema.createTable('comments'))
    .addColumn('post_id', 'integer', (c: any) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('body', 'text', (c: any) => c.notNull())
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .execute();
  await db.schema.createIndex('comments_by_post').on('comments').columns(['post_id', 'created_at']).execute();

  await db.schema.createTable('clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('homepage_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('confidential', 'public')`))
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('allowed_scopes', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'deactivated')`))
    .addColumn('secret_hash', 'text')
    .addColumn('id_token_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('updated_at', instant, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('clients_by_owner').on('clients').column('owner_id').execute();

  await db.schema.createTable('consents')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('updated_at', instant, (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['user_id', 'client_id'])
    .execute();

  await id(db.schema.createTable('grants'))
    .addColumn('user_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c: any) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('scope', 'text', (c: any) => c.notNull())
    .addColumn('nonce', 'text')
    .addColumn('auth_time', instant, (c: any) => c.notNull())
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .addColumn('last_used_at', instant, (c: any) => c.notNull())
    .addColumn('revoked_at', instant)
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('grants_by_user_client').on('grants').columns(['user_id', 'client_id']).execute();
  await db.schema.createIndex('grants_by_client').on('grants').column('client_id').execute();

  await db.schema.createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'integer', (c) => c.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('nonce', 'text')
    .addColumn('auth_time', instant, (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('expires_at', instant, (c) => c.notNull())
    .addColumn('used_at', instant)
    .execute();
  await db.schema.createIndex('codes_by_expiry').on('authorization_codes').column('expires_at').execute();
  await db.schema.createIndex('codes_by_grant').on('authorization_codes').column('grant_id').execute();

  for (const table of ['access_tokens', 'refresh_tokens'] as const) {
    let create = id(db.schema.createTable(table))
      .addColumn('token_hash', 'text', (c: any) => c.notNull().unique())
      .addColumn('grant_id', 'integer', (c: any) => c.notNull().references('grants.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c: any) => c.notNull())
      .addColumn('user_id', 'integer', (c: any) => c.notNull())
      .addColumn('scope', 'text', (c: any) => c.notNull())
      .addColumn('created_at', instant, (c: any) => c.notNull())
      .addColumn('expires_at', instant, (c: any) => c.notNull());
    if (table === 'refresh_tokens') create = create.addColumn('used_at', instant);
    await create.addColumn('revoked_at', instant).execute();
    await db.schema.createIndex(`${table}_by_grant`).on(table).column('grant_id').execute();
    await db.schema.createIndex(`${table}_by_expiry`).on(table).column('expires_at').execute();
  }

  await id(db.schema.createTable('personal_tokens'))
    .addColumn('user_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c: any) => c.notNull())
    .addColumn('token_hash', 'text', (c: any) => c.notNull().unique())
    .addColumn('scope', 'text', (c: any) => c.notNull())
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .addColumn('expires_at', instant)
    .addColumn('last_used_at', instant)
    .addColumn('revoked_at', instant)
    .execute();
  await db.schema.createIndex('personal_tokens_by_user').on('personal_tokens').column('user_id').execute();

  await db.schema.createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('retired_at', instant)
    .execute();

  await db.schema.createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('auth_time', instant, (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('last_seen_at', instant, (c) => c.notNull())
    .addColumn('expires_at', instant, (c) => c.notNull())
    .addColumn('ended_at', instant)
    .execute();
  await db.schema.createIndex('sessions_by_user').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_by_expiry').on('sessions').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'sessions', 'signing_keys', 'personal_tokens', 'refresh_tokens', 'access_tokens',
    'authorization_codes', 'grants', 'consents', 'clients', 'comments', 'post_likes', 'posts',
    'categories', 'avatars', 'users',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
