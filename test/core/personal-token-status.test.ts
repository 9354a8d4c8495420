/** A personal token's state, as the member's tokens page, the staff console and `token list` name it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { personalTokenStatus } from '../../src/core/credentials/personal-tokens.js';

const NOW = 1_700_000_000_000;

test('a token is revoked once revoked, whatever its expiry; expired from its expiry instant on (as the bearer gate refuses it); else active', () => {
  assert.equal(personalTokenStatus({ revokedAt: NOW - 5, expiresAt: NOW - 10 }, NOW), 'revoked');
  assert.equal(personalTokenStatus({ revokedAt: NOW - 5, expiresAt: null }, NOW), 'revoked');
  assert.equal(personalTokenStatus({ revokedAt: null, expiresAt: NOW }, NOW), 'expired');
  assert.equal(personalTokenStatus({ revokedAt: null, expiresAt: NOW + 1 }, NOW), 'active');
  assert.equal(personalTokenStatus({ revokedAt: null, expiresAt: null }, NOW), 'active');
});
