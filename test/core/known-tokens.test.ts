/** The table of tokens an instance issued or served (`KnownTokens`): what a refused address is still served. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KnownTokens } from '../../src/core/api/known-tokens.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';

test('a token added is known; of 100,000 made-up tokens, none is', () => {
  const known = new KnownTokens();
  const added = Array.from({ length: 1000 }, () => hashSecret(generateToken('access')));
  for (const hash of added) known.add(hash);
  assert.equal(added.filter((hash) => known.has(hash)).length >= 980, true, 'only a token sharing its slot with a newer one is forgotten');
  assert.equal(known.has(added.at(-1)!), true);
  let passed = 0;
  for (let i = 0; i < 100_000; i++) if (known.has(hashSecret(generateToken('personal')))) passed += 1;
  assert.equal(passed, 0);
});

test('a newer token in the same slot replaces the older, which is known again once added again', () => {
  const known = new KnownTokens();
  // The first three characters (18 bits) pick the slot; the next five are the fingerprint.
  const older = `AAA${'B'.repeat(40)}`;
  const newer = `AAA${'C'.repeat(40)}`;
  known.add(older);
  known.add(newer);
  assert.equal(known.has(newer), true);
  assert.equal(known.has(older), false);
  known.add(older);
  assert.equal(known.has(older), true);
});

test('an empty table knows no token, whatever its hash', () => {
  const known = new KnownTokens();
  assert.equal(known.has('A'.repeat(43)), false, 'fingerprint 0 would match an empty slot');
  assert.equal(known.has('_'.repeat(43)), false);
});
