/**
 * DPoP proof validation (RFC 9449 4.3), one test per rule, on the pure checks and the verifier
 * with an in-memory replay store; the HTTP behaviour is in test/oauth/dpop.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { exportJWK } from 'jose';
import { DpopNonces, NONCE_SLOT_SECONDS } from '../../src/core/oauth/dpop/nonces.js';
import { DPOP_ALGS, DpopProofError, IAT_WINDOW_SECONDS, accessTokenHash, checkProof } from '../../src/core/oauth/dpop/proof.js';
import { DpopVerifier } from '../../src/core/oauth/dpop/verifier.js';
import { memoryServerSecrets, memorySharedKeys } from '../support/server-secrets.js';
import type { DpopReplayStore } from '../../src/core/oauth/ports.js';
import { TestClock } from '../support/clock.js';
import { dpopKey, dpopProof, unsignedProof } from '../support/dpop.js';

const HTU = 'https://id.example/api/oauth/token';
const NOW = Date.UTC(2026, 10, 23, 4, 0, 0);
const expected = { method: 'POST', url: HTU, now: NOW };

async function refusal(proof: Promise<string> | string, expectations: Parameters<typeof checkProof>[1] = expected): Promise<string> {
  const error = await checkProof(await proof, expectations).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof DpopProofError, `refused: ${String(error)}`);
  assert.equal(error.code, 'invalid_dpop_proof');
  return error.description;
}

test('a proof made as RFC 9449 4.2 says passes, with its key thumbprint, for every supported algorithm', async () => {
  for (const alg of ['ES256', 'EdDSA', 'PS256', 'RS256'] as const) {
    const key = await dpopKey(alg);
    const checked = await checkProof(await dpopProof(key, { htu: HTU, nowMs: NOW }), expected);
    assert.equal(checked.jkt, key.jkt, alg);
  }
  assert.deepEqual([...DPOP_ALGS], ['ES256', 'EdDSA', 'Ed25519', 'PS256', 'RS256']);
});

test('typ must be dpop+jwt', async () => {
  const key = await dpopKey();
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, header: { typ: 'JWT' } })), /typ header must be dpop\+jwt \(RFC 9449 4\.2\)/);
});

test('alg none is refused', async () => {
  const key = await dpopKey();
  const unsigned = unsignedProof(key, HTU, NOW);
  assert.match(await refusal(unsigned), /must hold exactly one DPoP proof: a signed JWT/, 'no signature at all');
  assert.match(await refusal(`${unsigned}${randomBytes(64).toString('base64url')}`), /alg must be one of .* \(never none or a symmetric algorithm\)/, 'with a made-up signature');
});

test('a symmetric alg (HS256) is refused', async () => {
  const key = await dpopKey();
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const forged = `${part({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk })}.${part({ htm: 'POST', htu: HTU, jti: 'x', iat: NOW / 1000 })}.${randomBytes(32).toString('base64url')}`;
  assert.match(await refusal(forged), /alg must be one of ES256, EdDSA, Ed25519, PS256, RS256/);
});

test('a private key in jwk is refused', async () => {
  const key = await dpopKey();
  const privateJwk = await exportJWK(key.privateKey);
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, header: { jwk: privateJwk } })), /jwk holds a private or symmetric key/);
});

test('an RSA key of more than 4096 bits, or with a public exponent of more than 32 bits, is refused before its signature is checked', async () => {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const integer = (bits: number) => {
    const bytes = randomBytes(Math.ceil(bits / 8));
    bytes[0] = 0x80 >> ((8 - (bits % 8)) % 8);
    bytes[bytes.length - 1]! |= 1;
    return bytes.toString('base64url');
  };
  const claims = part({ htm: 'POST', htu: HTU, jti: 'x', iat: NOW / 1000 });
  const forged = (n: string, e: string, signatureBits: number) =>
    `${part({ alg: 'RS256', typ: 'dpop+jwt', jwk: { kty: 'RSA', n, e } })}.${claims}.${integer(signatureBits - 8)}`;
  const tooLarge = /RSA key is too large: use a modulus of at most 4096 bits and the public exponent 65537/;
  assert.match(await refusal(forged(integer(2048), integer(2040), 2048)), tooLarge, 'an exponent as long as the modulus');
  assert.match(await refusal(forged(integer(2048), integer(33), 2048)), tooLarge, 'an exponent of 33 bits');
  assert.match(await refusal(forged(integer(4097), 'AQAB', 4104)), tooLarge, 'a modulus of 4097 bits');
  assert.match(await refusal(forged(integer(4096), 'AQAB', 4096)), /signature does not verify/, 'a modulus of 4096 bits is checked as usual');
  const key = await dpopKey('RS256');
  assert.equal((await checkProof(await dpopProof(key, { htu: HTU, nowMs: NOW }), expected)).jkt, key.jkt, "an ordinary key (2048 bits, 65537) passes");
});

test('the signature must verify with the jwk of the header', async () => {
  const [key, other] = [await dpopKey(), await dpopKey()];
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, header: { jwk: other.jwk } })), /signature does not verify/);
});

test('htm must be the request method', async () => {
  const key = await dpopKey();
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, htm: 'GET' })), /htm must be the request's method, POST/);
});

test('htu must be the request URI, compared without query and fragment', async () => {
  const key = await dpopKey();
  assert.match(await refusal(dpopProof(key, { htu: 'https://id.example/api/oauth/revoke', nowMs: NOW })), /htu must be the address/);
  assert.match(await refusal(dpopProof(key, { htu: 'https://evil.example/api/oauth/token', nowMs: NOW })), /htu must be the address/);
  // RFC 9449 4.3 step 9: query and fragment are ignored; the URL parser normalises case and default port.
  await checkProof(await dpopProof(key, { htu: `${HTU}?a=1#frag`, nowMs: NOW }), expected);
  await checkProof(await dpopProof(key, { htu: 'HTTPS://ID.EXAMPLE:443/api/oauth/token', nowMs: NOW }), { ...expected, url: `${HTU}?x=y` });
});

test('htu and the request URI are compared after percent-encoding normalisation (RFC 9449 4.3, RFC 3986 6.2.2.2): the router serves /api/oauth/%74oken as /api/oauth/token (attack94)', async () => {
  const key = await dpopKey();
  await checkProof(await dpopProof(key, { htu: 'https://id.example/api/oauth/%74oken', nowMs: NOW }), expected);
  await checkProof(await dpopProof(key, { htu: HTU, nowMs: NOW }), { ...expected, url: 'https://id.example/api/oauth/%74%6Fken' });
  // Reserved characters stay encoded (a %2F is no slash), their hex digits compared in either case.
  await checkProof(await dpopProof(key, { htu: 'https://id.example/api/a%2fb', nowMs: NOW }), { ...expected, url: 'https://id.example/api/a%2Fb' });
  assert.match(await refusal(dpopProof(key, { htu: 'https://id.example/api/a/b', nowMs: NOW }), { ...expected, url: 'https://id.example/api/a%2Fb' }), /htu must be the address/);
  assert.match(await refusal(dpopProof(key, { htu: 'https://id.example/api/oauth/%72evoke', nowMs: NOW })), /htu must be the address/);
});

test(`iat must be within ${IAT_WINDOW_SECONDS} seconds of the server's time`, async () => {
  const key = await dpopKey();
  const nowSeconds = NOW / 1000;
  assert.match(await refusal(dpopProof(key, { htu: HTU, iat: nowSeconds - IAT_WINDOW_SECONDS - 1 })), /iat is more than 300 seconds/);
  assert.match(await refusal(dpopProof(key, { htu: HTU, iat: nowSeconds + IAT_WINDOW_SECONDS + 1 })), /iat is more than 300 seconds/);
  await checkProof(await dpopProof(key, { htu: HTU, iat: nowSeconds - IAT_WINDOW_SECONDS }), expected);
});

test('exp and nbf, when a proof carries them, are judged by the service\'s clock as iat is, not the machine\'s, and a refusal for either says so (RFC 7519 4.1.4, 4.1.5)', async () => {
  const key = await dpopKey();
  const nowSeconds = NOW / 1000;
  // NOW is days before the machine's clock: exp a minute after NOW has passed by the machine's.
  await checkProof(await dpopProof(key, { htu: HTU, nowMs: NOW, claims: { exp: nowSeconds + 60, nbf: nowSeconds - 60 } }), expected);
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, claims: { exp: nowSeconds - 60 } })), /has expired \(its exp has passed/);
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, claims: { nbf: nowSeconds + 60 } })), /not valid yet \(its nbf/);
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, claims: { exp: 'soon' } })), /claims are malformed/);
});

test('jti must be a non-empty string', async () => {
  const key = await dpopKey();
  assert.match(await refusal(dpopProof(key, { htu: HTU, nowMs: NOW, claims: { jti: '' } })), /must have a jti claim/);
});

test('ath must be the hash of the access token presented with the proof', async () => {
  const key = await dpopKey();
  const token = 'svco_example';
  const atResource = { method: 'GET', url: 'https://id.example/api/open/v1/me', now: NOW, accessToken: token };
  const proof = (ath: string | undefined) => dpopProof(key, { htm: 'GET', htu: atResource.url, nowMs: NOW, claims: ath === undefined ? {} : { ath } });
  assert.match(await refusal(proof(accessTokenHash('svco_other')), atResource), /ath must be the base64url SHA-256 of the access token/);
  assert.match(await refusal(proof(undefined), atResource), /ath must be/);
  await checkProof(await proof(accessTokenHash(token)), atResource);
});

/** The replay store as the database and Redis keep it, in memory. */
function memoryReplay(): DpopReplayStore {
  const seen = new Map<string, number>();
  return {
    claim: async (key, expiresAt, now) => {
      const until = seen.get(key);
      if (until !== undefined && until > now) return false;
      seen.set(key, expiresAt);
      return true;
    },
  };
}

test('the verifier asks for a nonce, accepts its proof, and accepts each jti once', async () => {
  const clock = new TestClock(NOW);
  const verifier = new DpopVerifier(new DpopNonces(memorySharedKeys()), memoryReplay(), clock);
  const key = await dpopKey();
  const presented = async (options: { nonce?: string; jti?: string }) => ({ method: 'POST', url: HTU, proof: await dpopProof(key, { htu: HTU, nowMs: clock.now(), ...options }) });

  const asked = await verifier.verify(await presented({})).then(() => undefined, (e: unknown) => e);
  assert.ok(asked instanceof DpopProofError);
  assert.equal(asked.code, 'use_dpop_nonce');
  assert.equal(asked.nonce, await verifier.currentNonce());

  const proof = await presented({ nonce: asked.nonce!, jti: 'one' });
  assert.deepEqual(await verifier.verify(proof), { jkt: key.jkt, nonce: undefined });
  const replayed = await verifier.verify(proof).then(() => undefined, (e: unknown) => e);
  assert.ok(replayed instanceof DpopProofError);
  assert.equal(replayed.code, 'invalid_dpop_proof');
  assert.match(replayed.description, /used already/);
});

test('a nonce rotates with its time slot, stays valid for two more slots, and is then refused with a fresh one', async () => {
  const clock = new TestClock(NOW);
  const verifier = new DpopVerifier(new DpopNonces(memorySharedKeys()), memoryReplay(), clock);
  const key = await dpopKey();
  const nonce = await verifier.currentNonce();
  clock.advance(NONCE_SLOT_SECONDS * 1000);
  const next = await verifier.currentNonce();
  assert.notEqual(next, nonce, 'nonces rotate');
  const stillValid = await verifier.verify({ method: 'POST', url: HTU, proof: await dpopProof(key, { htu: HTU, nowMs: clock.now(), nonce }) });
  assert.equal(stillValid.nonce, next, 'an older valid nonce is answered with the current one');
  clock.advance(2 * NONCE_SLOT_SECONDS * 1000);
  const expired = await verifier.verify({ method: 'POST', url: HTU, proof: await dpopProof(key, { htu: HTU, nowMs: clock.now(), nonce }) })
    .then(() => undefined, (e: unknown) => e);
  assert.ok(expired instanceof DpopProofError);
  assert.equal(expired.code, 'use_dpop_nonce');
  assert.equal(expired.nonce, await verifier.currentNonce());
});

test('nonces are the same on every instance that shares the secret', async () => {
  const secrets = memoryServerSecrets();
  const [a, b] = [new DpopNonces(memorySharedKeys(secrets)), new DpopNonces(memorySharedKeys(secrets))];
  assert.equal(await a.current(NOW), await b.current(NOW));
  assert.equal(await b.check(await a.current(NOW), NOW), 'current');
  assert.equal(await new DpopNonces(memorySharedKeys()).check(await a.current(NOW), NOW), 'invalid', 'another secret, another nonce');
});
