/** The HMAC keys every instance shares (`src/core/credentials/shared-keys.ts`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerSecretStore } from '../../src/core/credentials/ports.js';
import { memoryServerSecrets, memorySharedKeys } from '../support/server-secrets.js';

test('instances sharing a store read the same key, made once, 32 random bytes', async () => {
  const secrets = memoryServerSecrets();
  const [one, other] = [memorySharedKeys(secrets), memorySharedKeys(secrets)];
  const key = await one.key('token-mark-hmac');
  assert.equal(key.length, 32);
  assert.deepEqual(await other.key('token-mark-hmac'), key);
  assert.notDeepEqual(await one.key('dpop-nonce-hmac'), key, 'each use its own key');
  assert.notDeepEqual(await memorySharedKeys().key('token-mark-hmac'), key, 'another store, another key');
});

test('a key is read once per instance, and a read that failed is tried again', async () => {
  const memory = memoryServerSecrets();
  let reads = 0;
  let failing = true;
  const secrets: ServerSecretStore = {
    getOrCreate: async (name, fresh, now) => {
      reads += 1;
      if (failing) throw new Error('database unavailable');
      return memory.getOrCreate(name, fresh, now);
    },
  };
  const keys = memorySharedKeys(secrets);
  await assert.rejects(keys.key('device-cookie-hmac'), /database unavailable/);
  failing = false;
  const key = await keys.key('device-cookie-hmac');
  assert.deepEqual(await keys.key('device-cookie-hmac'), key);
  assert.equal(reads, 2, 'the failed read, then one');
});

test('readAll makes every key before serving, so no request writes one', async () => {
  const secrets = memoryServerSecrets();
  await memorySharedKeys(secrets).readAll();
  assert.deepEqual([...secrets.stored.keys()].sort(), ['device-cookie-hmac', 'dpop-nonce-hmac', 'mailbox-pass-hmac', 'passkey-challenge-hmac', 'pushed-request-hmac', 'token-mark-hmac']);
});
