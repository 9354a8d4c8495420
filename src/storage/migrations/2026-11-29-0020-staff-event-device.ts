/**
 * The lines staff changes wrote in members' security logs (`staff.sessions_revoked`,
 * `staff.two_step_reset`, `staff.role_changed`) before they were stored as from the site's staff:
 * their device was empty, so the log's "From" column was blank where the command line's changes
 * read "the site's staff". Named so now, in the stored words the pages translate (`SITE_STAFF`).
 * No line a browser wrote is touched: those kinds are written by staff changes alone. Frozen in
 * time: it takes `Kysely<any>` and imports nothing from the application.
 */
import type { Kysely } from 'kysely';

const STAFF_KINDS = ['staff.sessions_revoked', 'staff.two_step_reset', 'staff.role_changed'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.updateTable('security_events').set({ device: 'the site\'s staff' }).where('kind', 'in', STAFF_KINDS).where('device', '=', '').execute();
}

/** Nothing to undo: the earlier release reads the named lines as it reads the newer ones. */
export async function down(_db: Kysely<any>): Promise<void> {}
