/**
 * Instances starting together on one SQLite file take turns to migrate it. Kysely's migrator
 * takes no lock on SQLite, so two starts on a new file both created the tables and one failed
 * (`table "users" already exists`), or both seeded the demo (attack62). PostgreSQL's turn is an
 * advisory lock (`SCHEMA_CHANGE_LOCK`).
 *
 * The turn is an exclusive transaction on a small empty file beside the database
 * (`<file>-migration`, `prepareMigrationTurnFile`): SQLite's own file lock, which the system
 * gives back if its holder dies, and which a second connection in the same process waits for
 * too. It is another file so that the database itself stays open to the migrations, on the
 * holder's one connection.
 */
import { closeSync, constants, fchmodSync, openSync, realpathSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { isOwnerOnlyFile, refuseUnlessOwnFile } from './directories.js';
import { untilNotBusy } from './sqlite-busy.js';

/** How long a start waits for another's migrations, on SQLite and PostgreSQL: a large database's data steps (renderings, avatars) take minutes. */
export const TURN_WAIT_MS = 15 * 60_000;
const TRY_PAUSE_MS = 50;

/**
 * The lock file of the database at `databaseFile` (which exists), made when missing. Named after
 * the database's real path, so two spellings of it (a symlink) share one turn. Mode 0600, never
 * opened through a symlink (one planted there would have the service create or chmod another
 * file), never a FIFO or, as root, a hard link (`refuseUnlessOwnFile`). A command run as root
 * makes it only beside a database in a directory of root's (`refuseUnsafePathAsRoot`), so it is
 * never handed to another owner.
 */
export function prepareMigrationTurnFile(databaseFile: string): string {
  const database = realpathSync(databaseFile);
  const lockFile = `${database}-migration`;
  if (isOwnerOnlyFile(lockFile)) return lockFile;
  const descriptor = openSync(lockFile, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  try {
    refuseUnlessOwnFile(descriptor, lockFile, 'the migration lock file');
    fchmodSync(descriptor, 0o600);
  } finally {
    closeSync(descriptor);
  }
  return lockFile;
}

/** Runs `work` in the migration turn of `lockFile` (`prepareMigrationTurnFile`), waiting (without holding up the event loop) for another start's. */
export async function inMigrationTurn<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
  const lock = new SQLite(lockFile);
  try {
    lock.pragma('busy_timeout = 0');
    await untilNotBusy(() => lock.exec('BEGIN EXCLUSIVE'), TURN_WAIT_MS, { firstPauseMs: TRY_PAUSE_MS, maxPauseMs: TRY_PAUSE_MS });
    try {
      return await work();
    } finally {
      lock.exec('ROLLBACK');
    }
  } finally {
    lock.close();
  }
}
