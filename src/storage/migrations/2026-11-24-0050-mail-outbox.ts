/**
 * The mail outbox (INTERFACE section 12, issue 32 item 4): every mail is a row written in the
 * transaction of the event that causes it, already rendered, and claimed by one instance at a time
 * under a lease until it is sent or given up, so a restart or an SMTP outage loses none. Frozen in
 * time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const instant = 'bigint';
  let table = db.schema.createTable('mail_outbox');
  table = sqlite
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity());
  await table
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body_text', 'text', (c) => c.notNull())
    .addColumn('body_html', 'text')
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', instant, (c) => c.notNull())
    .addColumn('lease_until', instant)
    .addColumn('claim', 'text')
    .addColumn('last_error', 'text')
    .addColumn('sent_at', instant)
    .addColumn('abandoned_at', instant)
    .execute();
  // The sender's question, "what is due?", reads only the mails still pending.
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').column('next_attempt_at')
    .where(sql<boolean>`sent_at is null and abandoned_at is null`).execute();
  await db.schema.createIndex('mail_outbox_user').on('mail_outbox').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
