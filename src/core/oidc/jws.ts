/**
 * The tokens this server signs (id_tokens, logout tokens) as compact JWS (RFC 7515 section 7.1),
 * signed by `node:crypto` on libuv's pool. jose's `SignJWT` went through WebCrypto and its own
 * base64url: a third to a half more instructions a token for ES256, 3-7 % more for RS256
 * (docs/performance.md, decision 71). jose still verifies what others sign.
 */
import { type JsonWebKey, type KeyObject, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { SigningKeyDamagedError } from '../errors.js';
import type { CurrentKey } from './key-ring.js';
import type { IdTokenAlg } from './ports.js';

/** RFC 7518 3.3: an RS256 key is at least 2,048 bits; 3.4: ES256 is P-256 (OpenSSL's `prime256v1`). */
function fitsAlg(key: KeyObject, alg: IdTokenAlg): boolean {
  const details = key.asymmetricKeyDetails;
  if (alg === 'RS256') return key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048;
  return key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1';
}

/** What a key signs once when imported, to be verified with its published half. */
const PROBE = Buffer.from('a signing key checked against its published public key');

/**
 * A stored key as a signing key of `alg`: its private JWK (opened, as JSON) must be a private key
 * of that algorithm (wrong type, curve or size refused) and the very key its published JWK names
 * (`published`, `undefined` when the row holds none), or every token it signed would fail
 * verification against the JWKS. Throws
 * `SigningKeyDamagedError` saying which, never quoting the key.
 */
export function importSigningKey(privateJwk: string, published: JsonWebKey | undefined, alg: IdTokenAlg): KeyObject {
  if (!published) throw new SigningKeyDamagedError('its public JWK is not a JSON object');
  let key: KeyObject;
  try {
    // A JWK without its private members is refused here by Node itself.
    key = createPrivateKey({ key: JSON.parse(privateJwk) as JsonWebKey, format: 'jwk' });
  } catch {
    // Not the parser's message: it quotes the text, which is a private key.
    throw new SigningKeyDamagedError('its private JWK is not a private key');
  }
  if (!fitsAlg(key, alg)) throw new SigningKeyDamagedError(`it is not an ${alg} key (${alg === 'RS256' ? 'RSA of 2,048 bits or more' : 'EC on P-256'})`);
  // Signed and verified, not compared member by member: Node takes a private JWK's public members
  // (x and y, n and e) as given, without checking them against its private ones.
  if (!signsFor(key, published)) throw new SigningKeyDamagedError('its private key is not the one its published public JWK names');
  return key;
}

function signsFor(key: KeyObject, published: JsonWebKey): boolean {
  try {
    return verify('sha256', PROBE, createPublicKey({ key: published, format: 'jwk' }), sign('sha256', PROBE, key));
  } catch {
    // A published JWK that is no public key, or private members that do not make a key (OpenSSL
    // checks an RSA signature made with the CRT members and refuses to give a wrong one).
    return false;
  }
}

const encoded = (part: object): string => Buffer.from(JSON.stringify(part)).toString('base64url');

/**
 * `payload` as a compact JWS signed with `key`, its header naming the key's algorithm and `kid`
 * and the token's `typ` (RFC 8725 3.11). RFC 7518 3.3: RS256 is RSASSA-PKCS1-v1_5 with SHA-256;
 * 3.4: ES256's signature is R and S, 32 octets each, not DER.
 */
export function signCompact(key: CurrentKey, typ: string, payload: object): Promise<string> {
  const input = `${encoded({ alg: key.alg, kid: key.kid, typ })}.${encoded(payload)}`;
  const signer = key.alg === 'ES256' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' as const } : key.privateKey;
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(input, 'ascii'), signer, (error, signature) => {
      if (error) reject(error);
      else resolve(`${input}.${signature.toString('base64url')}`);
    });
  });
}
