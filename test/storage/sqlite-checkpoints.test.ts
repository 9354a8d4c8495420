/**
 * SQLite's WAL checkpoints run in the checkpointer's worker thread, not inside the commits of
 * the serving connection (src/storage/sqlite-checkpointer.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase } from '../../src/storage/database.js';
import { BACKSTOP_PAGES, CHECKPOINT_INTERVAL_MS, type CheckpointReport, FAILING_INTERVAL_MAX_MS, startCheckpointer } from '../../src/storage/sqlite-checkpointer.js';

test('committed pages reach the database file through the checkpointer while the serving connection only appends to the log', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
  const path = join(dir, 'service.db');
  const handle = openDatabase({ kind: 'sqlite', path });
  try {
    await sql`create table filler (body blob not null)`.execute(handle.db);
    // Fold what is committed so far (the new table) into the file ourselves, so that the size
    // measured next cannot still grow by it, however late the worker starts.
    const other = new SQLite(path);
    other.pragma('wal_checkpoint(PASSIVE)');
    other.close();
    const before = statSync(path).size;
    // About 200 pages: far below the serving connection's own checkpoint (BACKSTOP_PAGES), so only
    // the checkpointer can copy them into the database file.
    const rows = 200;
    assert.ok(rows < BACKSTOP_PAGES);
    await handle.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows; i++) await sql`insert into filler (body) values (${randomBytes(4000)})`.execute(tx);
    });
    assert.equal(statSync(path).size, before, 'the commit itself wrote nothing into the database file');
    // The file grows page by page while a checkpoint copies, so wait for all of them; the worker
    // may also take a while to start on a busy machine, hence a deadline far above the interval.
    const copied = before + rows * 4000;
    const deadline = Date.now() + Math.max(CHECKPOINT_INTERVAL_MS * 20, 30_000);
    while (statSync(path).size < copied && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(statSync(path).size >= copied, 'the checkpointer copied the committed pages into the database file');
  } finally {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a checkpoint that fails waits twice as long before the next, up to 5 s; the log says so once, and again when one works', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'));
  const path = join(dir, 'service.db');
  // Not a database: every pass fails, as on a full disk or a file that cannot be written.
  writeFileSync(path, Buffer.alloc(8192, 'x'));
  const reports: CheckpointReport[] = [];
  const lines: Array<[level: string, message: string]> = [];
  const intervalMs = 10;
  const checkpointer = startCheckpointer(path, { intervalMs, onReport: (report) => reports.push(report) });
  checkpointer.reportTo({ info: (_, message) => lines.push(['info', message]), warn: (_, message) => lines.push(['warn', message]), error: (_, message) => lines.push(['error', message]) });
  // The worker keeps no process alive: a timer waits for it.
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(done(), 'heard in time');
  };
  try {
    await until(() => reports.length >= 6);
    const waits = reports.slice(0, 6).map((report) => ('failed' in report ? report.retryInMs : 0));
    assert.deepEqual(waits, [20, 40, 80, 160, 320, 640].map((ms) => Math.min(ms, FAILING_INTERVAL_MAX_MS)));
    assert.match(reports[0] && 'failed' in reports[0] ? reports[0].failed : '', /not a database/);
    // A database where the garbage was: the next pass works.
    const good = join(dir, 'good.db');
    const made = new SQLite(good);
    made.exec('create table t (x)');
    made.close();
    copyFileSync(good, path);
    await until(() => reports.some((report) => 'recovered' in report));
    assert.deepEqual(lines.map(([level]) => level), ['warn', 'info'], 'one line for the failures, one for the recovery');
  } finally {
    await checkpointer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
