/** The replay window's pure rules (src/core/oauth/tokens/replay.ts): sealing under the old token, and what counts as a replay. */
import assert from 'node:assert/strict';
import { createDecipheriv, hkdfSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import type { RefreshToken } from '../../src/core/oauth/ports.js';
import { type ReplayAnswer, type ReplayCandidate, isReplay, openReplay, sealReplay } from '../../src/core/oauth/tokens/replay.js';

const T0 = Date.UTC(2026, 10, 23);
const answer: ReplayAnswer = { accessToken: generateToken('access'), refreshToken: generateToken('refresh'), idToken: 'eyJ.x.y', scope: 'openid', expiresIn: 3600, issuedAt: T0, requestedScope: null, dpopJkt: null };

describe('sealing a successor answer under the rotated token', () => {
  const token = generateToken('refresh');
  const sealed = sealReplay(token, hashSecret(token), answer);

  test('the rotated token opens its sealed answer, and the sealed text holds none of its strings', () => {
    assert.deepEqual(openReplay(token, hashSecret(token), sealed), answer);
    for (const secret of [answer.accessToken, answer.refreshToken, answer.idToken!, token]) assert.ok(!sealed.includes(secret));
  });

  test('the key is HKDF-SHA-256 of the token (RFC 5869), no salt, info "svc refresh replay v1": AES-256-GCM, the row\'s hash as AAD', () => {
    const raw = Buffer.from(sealed.slice('r1.'.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(hkdfSync('sha256', token, '', 'svc refresh replay v1', 32)), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(hashSecret(token)));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    assert.deepEqual(JSON.parse(plain), answer);
  });

  test('another token, another row or a damaged text opens nothing', () => {
    const other = generateToken('refresh');
    assert.equal(openReplay(other, hashSecret(token), sealed), undefined);
    assert.equal(openReplay(token, hashSecret(other), sealed), undefined);
    // A character inside the text: the last one may carry only base64url's padding bits.
    const middle = Math.floor(sealed.length / 2);
    const flipped = `${sealed.slice(0, middle)}${sealed[middle] === 'A' ? 'B' : 'A'}${sealed.slice(middle + 1)}`;
    assert.equal(openReplay(token, hashSecret(token), flipped), undefined);
    assert.equal(openReplay(token, hashSecret(token), 'r1.'), undefined);
  });
});

describe('what counts as a replay', () => {
  const rotated: RefreshToken = { id: 1, tokenHash: 'h', grantId: 1, clientId: 'app', userId: 1, scope: 's', createdAt: T0, expiresAt: T0 + 86_400_000, revokedAt: null, usedAt: T0, dpopJkt: null, resource: null };
  const candidate: ReplayCandidate = { token: rotated, sealed: 'r1.x', successor: { usedAt: null, revokedAt: null } };

  const app = { clientId: 'app', type: 'confidential' } as const;
  const publicApp = { clientId: 'app', type: 'public' } as const;

  test('its own confidential client, within the window, successor unused: a replay', () => {
    assert.equal(isReplay(candidate, app, T0 + 20_000, 20), true);
  });

  test('a public client\'s bearer token is never replayed; its DPoP-bound token is', () => {
    assert.equal(isReplay(candidate, publicApp, T0, 20), false);
    assert.equal(isReplay({ ...candidate, token: { ...rotated, dpopJkt: 'jkt' } }, publicApp, T0, 20), true);
  });

  test('after the window, another client, a used or revoked successor, no sealed answer, or the window off: reuse', () => {
    assert.equal(isReplay(candidate, app, T0 + 20_001, 20), false);
    assert.equal(isReplay(candidate, { ...app, clientId: 'other' }, T0, 20), false);
    assert.equal(isReplay({ ...candidate, successor: { usedAt: T0 + 1, revokedAt: null } }, app, T0 + 2, 20), false);
    assert.equal(isReplay({ ...candidate, successor: { usedAt: null, revokedAt: T0 + 1 } }, app, T0 + 2, 20), false);
    assert.equal(isReplay({ ...candidate, successor: undefined }, app, T0, 20), false);
    assert.equal(isReplay({ ...candidate, sealed: null }, app, T0, 20), false);
    assert.equal(isReplay({ ...candidate, token: { ...rotated, revokedAt: T0 } }, app, T0, 20), false);
    assert.equal(isReplay({ ...candidate, token: { ...rotated, usedAt: null } }, app, T0, 20), false);
    assert.equal(isReplay(candidate, app, T0, 0), false);
  });
});
