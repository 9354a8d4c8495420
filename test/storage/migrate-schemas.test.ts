/** Migrations on PostgreSQL land in the connection's own schema even when another schema is already migrated. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { dropSchema } from '../support/databases.js';

const postgresUrl = process.env.TEST_DATABASE_URL;

test('a new schema is migrated while another schema already holds the migration tables', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  const schemas = [0, 1].map(() => `m_${randomBytes(4).toString('hex')}`);
  try {
    for (const schema of schemas) {
      await admin.query(`create schema ${schema}`);
      const url = new URL(postgresUrl!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const handle = openDatabase({ kind: 'postgres', url: url.toString() });
      try {
        assert.deepEqual(await migrateToLatest(handle.db), { applied: ['2026-11-22-0001-initial', '2026-11-23-0002-signing-key-activation'] });
        assert.deepEqual(await migrateToLatest(handle.db), { applied: [] });
      } finally {
        await handle.close();
      }
    }
  } finally {
    for (const schema of schemas) await dropSchema(admin, schema);
    await admin.end();
  }
});
