/**
 * Erases what members' own deletions left before they erased it. Since 2026-12-01 a member's own
 * deletion erases, in its transaction, the account's sessions, security log, personal tokens,
 * grants (with their codes and tokens), consents, passkeys, waiting sign-ins and one-time secrets,
 * and since 2026-11-30 its e-mail address, links and mails (docs/site.md, "Deleting the account");
 * accounts deleted before kept them, though no one can ever use or read them again. Each such
 * account gets today's erase of all of these, its second factors and profile (bio, nickname,
 * avatar) with them, as `deleteAccount` erases them now.
 *
 * Staff's `deleted` keeps everything, since it can be set back to `active` (docs/staff.md), so an
 * account is erased only if it deleted itself: every deletion by its member before today wrote
 * `account.deleted` to the account's security log (staff's status change writes none, and logs
 * `member.status` in the staff log instead). An account still `deleted` whose `account.deleted`
 * line is newer than every status change by staff deleted itself last; one that staff made active
 * again and then deleted is staff's, and keeps its rows. The security log goes last: it is how the
 * accounts were found. Frozen in time: it takes `Kysely<any>` and imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely';

/**
 * The tables that hold what the deletion erases, by `user_id`: a grant's codes and tokens go with
 * it (`on delete cascade`), a challenge of a passkey with the passkeys, a link with its address.
 */
const ERASED = [
  'sessions', 'personal_tokens', 'grants', 'consents', 'passkeys', 'webauthn_challenges', 'pending_sign_ins', 'one_time_secrets',
  'totp_credentials', 'recovery_codes', 'member_emails', 'email_links', 'mail_outbox', 'avatars', 'security_events',
] as const;

/** Accounts a statement names at once: well under either database's limit of parameters. */
const ACCOUNTS_PER_STATEMENT = 500;

export async function up(db: Kysely<any>): Promise<void> {
  const selfDeleted: Array<{ id: number }> = await db.selectFrom('users as u').select('u.id').where('u.status', '=', 'deleted')
    .where((eb: any) => eb.exists(eb.selectFrom('security_events as e').select('e.id')
      .whereRef('e.user_id', '=', 'u.id').where('e.kind', '=', 'account.deleted')
      .where((inner: any) => inner.not(inner.exists(inner.selectFrom('staff_log as s').select('s.id')
        .where('s.action', '=', 'member.status').where('s.target_kind', '=', 'member')
        .where(sql<boolean>`s.target_id = cast(u.id as text)`).whereRef('s.created_at', '>=', 'e.created_at'))))))
    .execute();
  const ids = selfDeleted.map((row) => Number(row.id));
  for (let start = 0; start < ids.length; start += ACCOUNTS_PER_STATEMENT) {
    const slice = ids.slice(start, start + ACCOUNTS_PER_STATEMENT);
    for (const table of ERASED) await db.deleteFrom(table).where('user_id', 'in', slice).execute();
    await db.updateTable('users').set({ bio: '', nickname: null }).where('id', 'in', slice).execute();
  }
}

/** What was erased was no one's to read again: nothing to put back. */
export async function down(_db: Kysely<any>): Promise<void> {}
