/**
 * attack94: a DPoP proof is accepted once (RFC 9449 11.1) on every instance, also when their
 * clocks disagree by a few seconds. Each instance judges a proof's `iat` by its own clock, so one
 * whose clock runs behind accepts a proof for longer than the instance that took it first. The
 * database's replay store compares the stored expiry with the asking instance's clock, so it
 * holds; Redis expired the key after `expiresAt - now` of the first instance's clock, so an
 * instance 10 s behind took the same proof again once Redis had forgotten it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { IAT_WINDOW_SECONDS } from '../../src/core/oauth/dpop/proof.js';
import type { Clock } from '../../src/core/time.js';
import type { TestApp } from '../support/app.js';
import { onPostgres } from '../support/databases.js';
import { dpopKey, dpopProof } from '../support/dpop.js';
import { type Instances, startInstances } from '../support/instances.js';
import { redisUrl, uniqueKeyPrefix } from '../support/redis.js';
import { clientFields, newClient, pkcePair, startOAuthApp } from '../oauth/helpers.js';

const SKEW_MS = 10_000;

onPostgres('attack94: a proof is accepted once by instances whose clocks differ by seconds', (database) => {
  let t: TestApp;
  before(async () => { t = await startOAuthApp(database); });
  after(() => t.close());

  for (const withRedis of [false, true]) {
    test(`one instance ${SKEW_MS / 1000} s behind another refuses the proof the other took (${withRedis ? 'Redis' : 'database'})`, { skip: withRedis && !redisUrl ? 'TEST_REDIS_URL is not set' : false }, async () => {
      const env = withRedis ? { REDIS_URL: redisUrl! } : {};
      const ahead: Clock = { now: () => Date.now() };
      const behind: Clock = { now: () => Date.now() - SKEW_MS };
      // One service's two instances: one Redis key prefix, so one replay cache.
      const redisKeyPrefix = uniqueKeyPrefix();
      const first: Instances = await startInstances(database.url, 1, env, { clock: ahead, redisKeyPrefix });
      let second: Instances | undefined;
      try {
        second = await startInstances(database.url, 1, { ...env, BASE_URL: first.issuer }, { clock: behind, redisKeyPrefix });
        const a = first.list[0]!;
        const b = second.list[0]!;
        const c = await newClient(t, { type: 'public' });
        // No such code: a request that passes the proof's checks is refused invalid_grant.
        const fields = { grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: c.redirectUri, code_verifier: pkcePair().verifier, ...clientFields(c) };
        const htu = `${first.issuer}/api/oauth/token`;
        const key = await dpopKey();
        const post = (base: string, dpop: string) => fetch(`${base}/api/oauth/token`, {
          method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop }, body: new URLSearchParams(fields).toString(),
        });
        const nonce = (await post(a.base, await dpopProof(key, { htu }))).headers.get('dpop-nonce')!;
        // Made 295 s ago by the first instance's clock (285 s by the second's): both accept its iat,
        // with 5 s to spare for a loaded machine.
        const iat = Math.floor(Date.now() / 1000) - 295;
        const proof = await dpopProof(key, { htu, nonce, iat });
        const taken = (await (await post(a.base, proof)).json()) as { error: string };
        assert.equal(taken.error, 'invalid_grant', 'the first instance accepted the proof');
        // Past the first instance's window for its iat (which is all its own clock would have it
        // remembered for); the second, 10 s behind, still takes the iat, for 8.5 s more.
        await sleep((iat + IAT_WINDOW_SECONDS + 1) * 1000 + 500 - Date.now());
        const again = await post(b.base, proof);
        const body = (await again.json()) as { error: string; error_description: string };
        assert.equal(body.error, 'invalid_dpop_proof', `the second instance took the proof again: ${JSON.stringify(body)}`);
        assert.match(body.error_description, /used already/);
      } finally {
        await second?.close();
        await first.close();
      }
    });
  }
});
