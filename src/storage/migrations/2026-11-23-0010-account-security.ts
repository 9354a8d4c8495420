/**
 * Account security (issue 18 items 1–4): what a session knows of its browser and of how the user
 * signed in, the methods (`amr`, RFC 8176) carried on to the grant and the id_token, two-step
 * verification with an authenticator app and recovery codes, passkeys (WebAuthn) with their
 * single-use challenges, and the sign-ins waiting for their second step.
 * Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const instant = 'bigint';
  const id = (t: any) =>
    sqlite
      ? t.addColumn('id', 'integer', (c: any) => c.primaryKey().autoIncrement())
      : t.addColumn('id', 'integer', (c: any) => c.primaryKey().generatedByDefaultAsIdentity());

  // Sessions made before this migration were all password sign-ins.
  await db.schema.alterTable('sessions').addColumn('amr', 'text', (c) => c.notNull().defaultTo('pwd')).execute();
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('sessions').addColumn('address', 'text', (c) => c.notNull().defaultTo('')).execute();
  // Grants made before it carry no amr: their id_tokens go on without the claim.
  await db.schema.alterTable('grants').addColumn('amr', 'text').execute();

  // One authenticator app per account; `confirmed_at` is null while enrolment waits for a code.
  await db.schema.createTable('totp_credentials')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('confirmed_at', instant)
    .addColumn('last_step', instant)
    .execute();

  await id(db.schema.createTable('recovery_codes'))
    .addColumn('user_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c: any) => c.notNull())
    .addColumn('created_at', instant, (c: any) => c.notNull())
    .addColumn('used_at', instant)
    .execute();
  await db.schema.createIndex('recovery_codes_by_user').on('recovery_codes').columns(['user_id', 'code_hash']).execute();

  await db.schema.createTable('passkeys')
    .addColumn('credential_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', instant, (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('last_used_at', instant)
    .execute();
  await db.schema.createIndex('passkeys_by_user').on('passkeys').column('user_id').execute();

  await db.schema.createTable('webauthn_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('expires_at', instant, (c) => c.notNull())
    .addColumn('used_at', instant)
    .execute();
  await db.schema.createIndex('webauthn_challenges_by_expiry').on('webauthn_challenges').column('expires_at').execute();

  await db.schema.createTable('pending_sign_ins')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('amr', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('created_at', instant, (c) => c.notNull())
    .addColumn('expires_at', instant, (c) => c.notNull())
    .addColumn('used_at', instant)
    .execute();
  await db.schema.createIndex('pending_sign_ins_by_expiry').on('pending_sign_ins').column('expires_at').execute();
  await db.schema.createIndex('pending_sign_ins_by_user').on('pending_sign_ins').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['pending_sign_ins', 'webauthn_challenges', 'passkeys', 'recovery_codes', 'totp_credentials']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('grants').dropColumn('amr').execute();
  for (const column of ['address', 'user_agent', 'amr']) await db.schema.alterTable('sessions').dropColumn(column).execute();
}
