/**
 * An address change waiting for its link: the verified address stays the account's (for a
 * password reset and the notices) until the new one is verified, so a typo or a borrowed session
 * cannot take the member's way back in away. Frozen in time: it takes `Kysely<any>` and imports
 * nothing from the application.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').addColumn('pending_address', 'text').execute();
  // Lower-cased, as `address_key`: the key a verification link names.
  await db.schema.alterTable('member_emails').addColumn('pending_address_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('member_emails').dropColumn('pending_address_key').execute();
  await db.schema.alterTable('member_emails').dropColumn('pending_address').execute();
}
