/** Connections to one embedded database file, in one process and in several. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/storage/database.js';
import { temporarySqlitePath } from '../support/databases.js';

/** The files this process holds open that the kernel says were removed. */
function removedFilesHeld(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.endsWith(' (deleted)') ? [target] : [];
    } catch {
      return [];
    }
  });
}

test('a second connection to the file in the process leaves the first one\'s locks: another process closing its own does not remove the log from under it', async () => {
  const path = temporarySqlitePath();
  const first = openDatabase({ kind: 'sqlite', path });
  try {
    await sql`create table notes (body text not null)`.execute(first.db);
    await sql`insert into notes (body) values ('kept')`.execute(first.db);
    await openDatabase({ kind: 'sqlite', path }).close();
    // The last connection to close removes the log (SQLite's own rule): another process's must
    // find the first connection still there, by its locks on the shared-memory file.
    const other = spawnSync(process.execPath, ['-e', `const db = require('better-sqlite3')(${JSON.stringify(path)}); db.prepare('select count(*) from notes').get(); db.close();`], { encoding: 'utf8' });
    assert.equal(other.status, 0, other.stderr);
    assert.ok(existsSync(`${path}-wal`), 'the log is still there');
    assert.deepEqual(removedFilesHeld().filter((file) => file.startsWith(path)), []);
    await sql`insert into notes (body) values ('after')`.execute(first.db);
    assert.deepEqual((await sql<{ body: string }>`select body from notes order by rowid`.execute(first.db)).rows.map((r) => r.body), ['kept', 'after']);
  } finally {
    await first.close();
  }
});

test('a connection opened in the process during its migration turn leaves the turn held: another process still waits for it', async () => {
  const path = temporarySqlitePath();
  const first = openDatabase({ kind: 'sqlite', path });
  try {
    const otherTakesTurn = () => spawnSync(process.execPath, ['-e', `
      const lock = require('better-sqlite3')(${JSON.stringify(`${path}-migration`)});
      lock.pragma('busy_timeout = 0');
      try { lock.exec('BEGIN EXCLUSIVE'); lock.exec('ROLLBACK'); console.log('taken'); } catch (error) { console.log(error.code); }`], { encoding: 'utf8' }).stdout.trim();
    await first.inMigrationTurn(async () => {
      await openDatabase({ kind: 'sqlite', path }).close();
      assert.equal(otherTakesTurn(), 'SQLITE_BUSY');
    });
    assert.equal(otherTakesTurn(), 'taken');
  } finally {
    await first.close();
  }
});
