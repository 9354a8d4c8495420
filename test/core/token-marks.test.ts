/** The service's mark in the tokens it issues (`src/core/credentials/token-marks.ts`). */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { TokenMarker, TokenMarks } from '../../src/core/credentials/token-marks.js';
import { checksum, generateToken, tokenKind } from '../../src/core/credentials/formats.js';
import { memoryServerSecrets, memorySharedKeys } from '../support/server-secrets.js';

test('a marked token has the format of any other and bears the mark; of 100,000 unmarked ones, none does', () => {
  const marker = new TokenMarker(randomBytes(32));
  for (const kind of ['access', 'personal'] as const) {
    const token = marker.generate(kind);
    assert.match(token, kind === 'access' ? /^svco_[0-9A-Za-z]{38}$/ : /^svcp_[0-9A-Za-z]{38}$/);
    assert.equal(tokenKind(token), kind, 'its checksum holds');
    assert.equal(marker.bears(token), true);
  }
  let passed = 0;
  for (let i = 0; i < 100_000; i++) if (marker.bears(generateToken(i % 2 === 0 ? 'access' : 'personal'))) passed += 1;
  assert.equal(passed, 0);
});

test('a token marked under another key, or changed in one character and given a right checksum, does not bear the mark', () => {
  const marker = new TokenMarker(randomBytes(32));
  assert.equal(marker.bears(new TokenMarker(randomBytes(32)).generate('access')), false);
  const token = marker.generate('access');
  const body = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11, 37);
  const changed = body + checksum(body);
  assert.equal(tokenKind(changed), 'access');
  assert.equal(marker.bears(changed), false);
});

test('every instance reads one key: a token one marks, another tells', async () => {
  const secrets = memoryServerSecrets();
  const [one, other] = [new TokenMarks(memorySharedKeys(secrets)), new TokenMarks(memorySharedKeys(secrets))];
  assert.equal((await other.ready()).bears((await one.ready()).generate('personal')), true);
});
