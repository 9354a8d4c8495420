/** The one guarded outbound request (src/outbound/guarded-request.ts): what it asks of DNS. */
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { test } from 'node:test';
import { LOOKUPS_AT_ONCE, guardedRequest } from '../../src/outbound/guarded-request.js';

const options = { allowPrivateAddresses: false, allowSetting: 'TEST_ALLOW', timeoutMs: 300, maxBodyBytes: 1024, oversize: 'fail', userAgent: 'test' } as const;

test('names whose DNS never answers take at most two lookups at once, so they cannot hold the thread pool that signs and hashes; a request that gave up waiting asks nothing', async () => {
  const original = dns.lookup;
  const asked: string[] = [];
  let running = 0;
  let most = 0;
  // A resolver that answers nothing for 1 s, as a domain whose name servers drop queries.
  dns.lookup = ((hostname: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => {
    asked.push(hostname);
    running += 1;
    most = Math.max(most, running);
    setTimeout(() => {
      running -= 1;
      callback(Object.assign(new Error('timed out'), { code: 'EAI_AGAIN' }), []);
    }, 1000);
  }) as typeof dns.lookup;
  syncBuiltinESMExports();
  try {
    const names = Array.from({ length: 8 }, (_, i) => `slow-${i}.example`);
    const answers = await Promise.all(names.map((name) => guardedRequest(`https://${name}/doc.json`, { method: 'GET' }, options)));
    for (const answer of answers) assert.deepEqual(answer, { ok: false, answered: false, error: 'no answer within 0.3 s' });
    // Every request gave up at 0.3 s; let the lookups under way end, and any left waiting have their turn.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(most, LOOKUPS_AT_ONCE);
    assert.equal(LOOKUPS_AT_ONCE, 2);
    assert.deepEqual(asked, names.slice(0, LOOKUPS_AT_ONCE), 'those that waited past their request\'s end were never asked');
  } finally {
    dns.lookup = original;
    syncBuiltinESMExports();
  }
});
