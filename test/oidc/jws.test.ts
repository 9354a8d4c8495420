/**
 * The compact JWS this server signs its id_tokens and logout tokens with (RFC 7515 section 7.1,
 * RFC 7518 3.3 and 3.4), checked by an independent verifier (jose) and by the rules on keys.
 */
import assert from 'node:assert/strict';
import { type JsonWebKey, type KeyObject, generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { importSigningKey, signCompact } from '../../src/core/oidc/jws.js';
import type { IdTokenAlg } from '../../src/core/oidc/ports.js';

const jwkOf = (key: KeyObject): JsonWebKey => key.export({ format: 'jwk' });
const rsa = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits });
const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });

const PAIRS: Record<IdTokenAlg, ReturnType<typeof rsa>> = { RS256: rsa(2048), ES256: ec('P-256') };
const signingKey = (alg: IdTokenAlg) => ({ kid: 'k1', alg, privateKey: importSigningKey(jwkOf(PAIRS[alg].privateKey), alg) });

for (const alg of ['RS256', 'ES256'] as const) {
  test(`an ${alg} token verifies with the public key, its header names the key's alg and kid and the typ, its claims as given, Chinese text included`, async () => {
    const pair = PAIRS[alg];
    const claims = { iss: 'https://idp.example', sub: '42', name: '张三 🐼', iat: 1_764_900_000 };
    const token = await signCompact(signingKey(alg), 'JWT', claims);
    const { payload, protectedHeader } = await compactVerify(token, pair.publicKey, { algorithms: [alg] });
    assert.deepEqual(protectedHeader, { alg, kid: 'k1', typ: 'JWT' });
    assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), claims);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'base64url without padding (RFC 7515 section 2)');
  });
}

test('an ES256 signature is R and S, 64 octets, not DER (RFC 7518 3.4)', async () => {
  const token = await signCompact(signingKey('ES256'), 'JWT', { sub: '1' });
  assert.equal(Buffer.from(token.split('.')[2]!, 'base64url').length, 64);
  assert.equal(decodeProtectedHeader(token).alg, 'ES256');
});

test('a key that does not sign its algorithm is refused when imported: wrong type, curve, size, or a public key', () => {
  const refusals: [string, JsonWebKey, IdTokenAlg][] = [
    ['an EC key for RS256', jwkOf(PAIRS.ES256.privateKey), 'RS256'],
    ['an RSA key for ES256', jwkOf(PAIRS.RS256.privateKey), 'ES256'],
    ['a 1,024-bit RSA key (RFC 7518 3.3)', jwkOf(rsa(1024).privateKey), 'RS256'],
    ['a P-384 key for ES256', jwkOf(ec('P-384').privateKey), 'ES256'],
  ];
  for (const [what, jwk, alg] of refusals) assert.throws(() => importSigningKey(jwk, alg), /does not sign/, what);
  assert.throws(() => importSigningKey(jwkOf(PAIRS.RS256.publicKey), 'RS256'), 'a public key');
});
