/**
 * A member's e-mail address and the single-use links mailed to it (INTERFACE section 12): one
 * address per account, verified or not, and the links that verify it or reset the password,
 * stored only as SHA-256 hashes and consumed by one conditional write. Frozen in time: it takes
 * `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const instant = 'bigint';
  await db.schema.createTable('member_emails')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    // The lower-cased address, which a forgotten-password request looks up.
    .addColumn('address_key', 'text', (c) => c.notNull())
    .addColumn('verified_at', instant)
    .addColumn('updated_at', instant, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('member_emails_verified').on('member_emails').column('address_key')
    .where(sql<boolean>`verified_at is not null`).execute();

  await db.schema.createTable('email_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    // For a verification link: the address it verifies (a later change makes it worthless).
    .addColumn('address_key', 'text')
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('expires_at', instant, (c) => c.notNull())
    .addColumn('used_at', instant)
    .execute();
  await db.schema.createIndex('email_links_user').on('email_links').columns(['user_id', 'purpose']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_links').execute();
  await db.schema.dropTable('member_emails').execute();
}
