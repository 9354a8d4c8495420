/**
 * The peer's durable store (bench/servers/peer-sqlite-adapter.mjs): node-oidc-provider's adapter
 * contract, as its memory adapter keeps it, over a SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
// @ts-expect-error: a plain JavaScript module of the bench, without types
import { sqliteAdapterFactory } from '../../bench/servers/peer-sqlite-adapter.mjs';

interface Adapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  find(id: string): Promise<Record<string, unknown> | undefined>;
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-peer-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const adapterFor = sqliteAdapterFactory(join(dir, 'peer.db')) as (model: string) => Adapter;

test('the peer\'s durable store finds what it stored, by id, by session uid and by user code, per model', async () => {
  await adapterFor('Session').upsert('s1', { uid: 'u1', accountId: 'a' }, 60);
  await adapterFor('DeviceCode').upsert('d1', { userCode: 'ABCD' }, 60);
  assert.deepEqual(await adapterFor('Session').find('s1'), { uid: 'u1', accountId: 'a' });
  assert.deepEqual(await adapterFor('Session').findByUid('u1'), { uid: 'u1', accountId: 'a' });
  assert.deepEqual(await adapterFor('DeviceCode').findByUserCode('ABCD'), { userCode: 'ABCD' });
  assert.equal(await adapterFor('AccessToken').find('s1'), undefined, 'another model does not see it');
  await adapterFor('Session').upsert('s1', { uid: 'u1', accountId: 'b' }, 60);
  assert.deepEqual(await adapterFor('Session').find('s1'), { uid: 'u1', accountId: 'b' }, 'an upsert replaces');
});

test('the peer\'s durable store marks a consumed entry, forgets an expired or destroyed one', async () => {
  const codes = adapterFor('AuthorizationCode');
  await codes.upsert('c1', { grantId: 'g0' }, 60);
  await codes.consume('c1');
  assert.ok(typeof (await codes.find('c1'))?.consumed === 'number');
  await codes.upsert('c2', { grantId: 'g0' }, -1);
  assert.equal(await codes.find('c2'), undefined, 'expired');
  await codes.upsert('c3', { grantId: 'g0' }, 60);
  await codes.destroy('c3');
  assert.equal(await codes.find('c3'), undefined, 'destroyed');
});

test('the peer\'s durable store revokes every token of a grant and nothing else', async () => {
  await adapterFor('AccessToken').upsert('a1', { grantId: 'g1' }, 60);
  await adapterFor('RefreshToken').upsert('r1', { grantId: 'g1' }, 60);
  await adapterFor('RefreshToken').upsert('r2', { grantId: 'g2' }, 60);
  await adapterFor('RefreshToken').revokeByGrantId('g1');
  assert.equal(await adapterFor('AccessToken').find('a1'), undefined);
  assert.equal(await adapterFor('RefreshToken').find('r1'), undefined);
  assert.deepEqual(await adapterFor('RefreshToken').find('r2'), { grantId: 'g2' });
});
