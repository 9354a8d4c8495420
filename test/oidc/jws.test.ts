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
const json = (key: KeyObject): string => JSON.stringify(jwkOf(key));
const rsa = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits });
const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });

const PAIRS: Record<IdTokenAlg, ReturnType<typeof rsa>> = { RS256: rsa(2048), ES256: ec('P-256') };
const signingKey = (alg: IdTokenAlg) => ({ kid: 'k1', alg, privateKey: importSigningKey(json(PAIRS[alg].privateKey), jwkOf(PAIRS[alg].publicKey), alg) });

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
  const refusals: [string, ReturnType<typeof rsa>, IdTokenAlg][] = [
    ['an EC key for RS256', PAIRS.ES256, 'RS256'],
    ['an RSA key for ES256', PAIRS.RS256, 'ES256'],
    ['a 1,024-bit RSA key (RFC 7518 3.3)', rsa(1024), 'RS256'],
    ['a P-384 key for ES256', ec('P-384'), 'ES256'],
  ];
  for (const [what, pair, alg] of refusals) {
    assert.throws(() => importSigningKey(json(pair.privateKey), jwkOf(pair.publicKey), alg), { name: 'SigningKeyDamagedError', message: /is not an/ }, what);
  }
  assert.throws(() => importSigningKey(json(PAIRS.RS256.publicKey), jwkOf(PAIRS.RS256.publicKey), 'RS256'), { name: 'SigningKeyDamagedError', message: /not a private key/ }, 'a public key');
});

for (const alg of ['RS256', 'ES256'] as const) {
  test(`an ${alg} private key is refused when it is not the key its published JWK names, as tokens it signed would not verify`, () => {
    const other = alg === 'RS256' ? rsa(2048) : ec('P-256');
    assert.throws(() => importSigningKey(json(other.privateKey), jwkOf(PAIRS[alg].publicKey), alg), { name: 'SigningKeyDamagedError', message: /not the one its published public JWK names/ });
  });
}

for (const alg of ['RS256', 'ES256'] as const) {
  test(`an ${alg} private JWK with its published public members but another key's private ones is refused: Node does not check one against the other`, () => {
    const own = jwkOf(PAIRS[alg].privateKey);
    const other = jwkOf((alg === 'RS256' ? rsa(2048) : ec('P-256')).privateKey);
    const forged = alg === 'ES256' ? { ...own, d: other.d } : { ...own, d: other.d, p: other.p, q: other.q, dp: other.dp, dq: other.dq, qi: other.qi };
    assert.throws(() => importSigningKey(JSON.stringify(forged), jwkOf(PAIRS[alg].publicKey), alg), { name: 'SigningKeyDamagedError' });
  });
}

test('a stored private JWK that is not JSON is refused without quoting it, as it would be in the log and on /readyz', () => {
  const privateJwk = json(PAIRS.ES256.privateKey);
  const { d } = JSON.parse(privateJwk) as { d: string };
  // Text the parser would quote the start of: the private scalar itself.
  const damaged = `${d}${privateJwk}`;
  assert.throws(() => importSigningKey(damaged, jwkOf(PAIRS.ES256.publicKey), 'ES256'), (error: Error) => {
    assert.equal(error.name, 'SigningKeyDamagedError');
    assert.ok(!error.message.includes(d.slice(0, 8)), error.message);
    return true;
  });
});
