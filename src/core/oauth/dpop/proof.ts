/**
 * DPoP proof validation (RFC 9449 4.3), pure: no storage, no clock of its own, no HTTP. Each rule
 * is one named step, run in the order of 4.3's list; the first that fails throws a
 * `DpopProofError` whose description says what to fix. The nonce and the `jti` replay cache,
 * which need state shared by every instance, are checked by `DpopVerifier` after these.
 */
import { createHash } from 'node:crypto';
import { EmbeddedJWK, type JWK, type JWTPayload, type ProtectedHeaderParameters, calculateJwkThumbprint, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { Instant } from '../../time.js';

/**
 * The signature algorithms a proof may use (RFC 9449 5.1 `dpop_signing_alg_values_supported`):
 * asymmetric only, never `none` or an HMAC (4.2: "MUST NOT be none or an identifier for a
 * symmetric algorithm"). `Ed25519` is RFC 9864's name for EdDSA over Ed25519 (what oauth4webapi sends).
 */
export const DPOP_ALGS = ['ES256', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] as const;
export type DpopAlg = (typeof DPOP_ALGS)[number];

/**
 * RFC 9449 11.1: how far `iat` may be from the server's clock, either way, in seconds. Freshness
 * is the server nonce's job (always required, see `DpopVerifier`); `iat` only bounds a proof's
 * life and tolerates the clock skew of phones and laptops.
 */
export const IAT_WINDOW_SECONDS = 300;

/** A JWS of the largest key we accept (RSA 4096) is about 2 KB; anything far past it is not a proof. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/**
 * The largest RSA key a proof may carry: a modulus of 4096 bits, a public exponent of 32 bits
 * (65537 in practice). Verifying costs the server a modular exponentiation by the exponent, so a
 * key with an exponent as long as its modulus, or a modulus of 15,000 bits, makes each refused
 * proof cost a hundred times an ordinary one; such keys are refused before the signature is checked.
 */
const MAX_RSA_MODULUS_BITS = 4096;
const MAX_RSA_EXPONENT_BITS = 32;
/** Members of a private or symmetric JWK (RFC 7518 6.2.2, 6.3.2, 6.4; RFC 8037 2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** Why a proof is refused; `nonce` is the nonce to send with a `use_dpop_nonce` (RFC 9449 8). */
export class DpopProofError extends Error {
  override readonly name = 'DpopProofError';
  constructor(readonly code: DpopErrorCode, readonly description: string, readonly nonce?: string) {
    super(`${code}: ${description}`);
  }
}

function invalid(description: string): DpopProofError {
  return new DpopProofError('invalid_dpop_proof', description);
}

/** What the request the proof came with was: RFC 9449 4.3 checks the proof against it. */
export interface ProofExpectations {
  /** The request's method (`htm`). */
  method: string;
  /** The request's absolute URL at the public address (`htu`); any query is ignored. */
  url: string;
  now: Instant;
  /** At a resource: the access token presented with the proof (`ath`, RFC 9449 4.3 step 12). */
  accessToken?: string;
}

/** A proof that passed every rule of RFC 9449 4.3 but the nonce and replay checks. */
export interface CheckedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key: what tokens are bound to (`cnf.jkt`, 6.1). */
  jkt: string;
  jti: string;
  /** Seconds. */
  iat: number;
  nonce: string | undefined;
}

/** RFC 9449 4.3 steps 1–2: one well-formed compact JWS, of a sensible size. */
function checkShape(proof: string): void {
  if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) {
    throw invalid('The DPoP header must hold exactly one DPoP proof: a signed JWT (compact JWS) made for this request.');
  }
}

/** RFC 9449 4.3 steps 4–6: `typ` dpop+jwt, an asymmetric `alg` we support, a public `jwk`. */
function checkHeader(proof: string): ProtectedHeaderParameters & { jwk: JWK } {
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalid('The DPoP proof\'s header is not a JSON object.');
  }
  if (header.typ !== 'dpop+jwt') throw invalid('The DPoP proof\'s typ header must be dpop+jwt (RFC 9449 4.2).');
  if (typeof header.alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(header.alg)) {
    throw invalid(`The DPoP proof's alg must be one of ${DPOP_ALGS.join(', ')} (never none or a symmetric algorithm).`);
  }
  const jwk = header.jwk;
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw invalid('The DPoP proof\'s header must carry the public key as jwk.');
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
    throw invalid('The DPoP proof\'s jwk holds a private or symmetric key: put only the public key in the header, and keep the private key secret.');
  }
  checkRsaSize(jwk as JWK);
  return header as ProtectedHeaderParameters & { jwk: JWK };
}

/** The length in bits of a base64url big-endian integer (RFC 7518 6.3.1), leading zero bytes aside. */
function bitLength(value: unknown): number {
  if (typeof value !== 'string') return 0;
  const bytes = Buffer.from(value, 'base64url');
  const first = bytes.findIndex((byte) => byte !== 0);
  return first === -1 ? 0 : (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first]!));
}

/** An RSA `jwk` within `MAX_RSA_MODULUS_BITS` and `MAX_RSA_EXPONENT_BITS` (what any client library makes). */
function checkRsaSize(jwk: JWK): void {
  if (jwk.kty !== 'RSA') return;
  if (bitLength(jwk.n) > MAX_RSA_MODULUS_BITS || bitLength(jwk.e) > MAX_RSA_EXPONENT_BITS) {
    throw invalid(`The DPoP proof's RSA key is too large: use a modulus of at most ${MAX_RSA_MODULUS_BITS} bits and the public exponent 65537 (or an EC or Ed25519 key).`);
  }
}

/**
 * RFC 9449 4.3 step 7: the signature verifies with the header's `jwk`. An `exp` or `nbf` the proof
 * carries (RFC 7519 4.1.4, 4.1.5) is judged by the service's clock, as `iat` is, not the machine's.
 */
async function verifySignature(proof: string, now: number): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(proof, EmbeddedJWK, { algorithms: [...DPOP_ALGS], typ: 'dpop+jwt', currentDate: new Date(now) });
    return payload;
  } catch (error) {
    if ((error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) && error.reason === 'check_failed') {
      if (error.claim === 'exp') throw invalid('The DPoP proof has expired (its exp has passed by this server\'s clock): make a new proof for every request, or leave exp out.');
      if (error.claim === 'nbf') throw invalid('The DPoP proof is not valid yet (its nbf is later than this server\'s clock): leave nbf out, or set it no later than iat.');
    }
    throw invalid('The DPoP proof\'s signature does not verify with the key in its jwk header (or its claims are malformed).');
  }
}

/** RFC 9449 4.3 step 8: `htm` is the request's method. */
function checkMethod(payload: JWTPayload, expected: ProofExpectations): void {
  if (payload.htm !== expected.method) throw invalid(`The DPoP proof's htm must be the request's method, ${expected.method}.`);
}

/** RFC 3986 2.3: the characters a percent-encoding never needs to hide. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * RFC 3986 6.2.2.2 and 6.2.2.1: an encoded unreserved character is that character, and the hex
 * digits of the others are upper case. The URL parser does neither; the router decodes the
 * unreserved ones (it serves `/api/oauth/%74oken` as the token endpoint), so without this a
 * client's proof and the request it came with could name one resource in two spellings.
 */
function normalisedPercentEncoding(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (encoded, hex: string) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : encoded.toUpperCase();
  });
}

/** An http(s) URI without query and fragment, normalised by the URL parser and RFC 3986 6.2.2's percent-encoding rules (6.2.2, 6.2.3). */
function withoutQuery(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.search = '';
  url.hash = '';
  url.pathname = normalisedPercentEncoding(url.pathname);
  return url.href;
}

/** RFC 9449 4.3 step 9: `htu` is the request's URI, compared without query and fragment. */
function checkUri(payload: JWTPayload, expected: ProofExpectations): void {
  const target = withoutQuery(expected.url);
  if (target === undefined || withoutQuery(payload.htu) !== target) {
    throw invalid(`The DPoP proof's htu must be the address the request was sent to, ${target ?? expected.url} (query and fragment are ignored).`);
  }
}

/** RFC 9449 4.3 step 11 and 11.1: `iat` within `IAT_WINDOW_SECONDS` of the server's clock. */
function checkIssuedAt(payload: JWTPayload, expected: ProofExpectations): number {
  const { iat } = payload;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalid('The DPoP proof must have an iat claim: the time it was made, in seconds.');
  if (Math.abs(expected.now / 1000 - iat) > IAT_WINDOW_SECONDS) {
    throw invalid(`The DPoP proof's iat is more than ${IAT_WINDOW_SECONDS} seconds from the server's time: make a new proof for every request, and check the device's clock.`);
  }
  return iat;
}

/** RFC 9449 4.2: a unique `jti` (its replay is checked by the verifier). */
function checkJti(payload: JWTPayload): string {
  const { jti } = payload;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    throw invalid(`The DPoP proof must have a jti claim: a random string of at most ${MAX_JTI_LENGTH} characters, new for every proof.`);
  }
  return jti;
}

/** The `ath` of an access token (RFC 9449 4.2): base64url of its SHA-256. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/** RFC 9449 4.3 step 12: at a resource, `ath` is the hash of the access token presented with it. */
function checkAccessTokenHash(payload: JWTPayload, expected: ProofExpectations): void {
  if (expected.accessToken === undefined) return;
  if (payload.ath !== accessTokenHash(expected.accessToken)) {
    throw invalid('The DPoP proof\'s ath must be the base64url SHA-256 of the access token sent with it.');
  }
}

/** The nonce claim, when there is one (its validity is the verifier's to decide). */
function nonceOf(payload: JWTPayload): string | undefined {
  const { nonce } = payload;
  if (nonce === undefined) return undefined;
  if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > 256) throw invalid('The DPoP proof\'s nonce must be the string the server sent in DPoP-Nonce.');
  return nonce;
}

/**
 * Checks a DPoP proof against the request it came with (RFC 9449 4.3 steps 1–9, 11 and 12);
 * throws `DpopProofError` (`invalid_dpop_proof`) at the first rule it breaks.
 */
export async function checkProof(proof: string, expected: ProofExpectations): Promise<CheckedProof> {
  checkShape(proof);
  const header = checkHeader(proof);
  const payload = await verifySignature(proof, expected.now);
  checkMethod(payload, expected);
  checkUri(payload, expected);
  const iat = checkIssuedAt(payload, expected);
  const jti = checkJti(payload);
  checkAccessTokenHash(payload, expected);
  const nonce = nonceOf(payload);
  return { jkt: await calculateJwkThumbprint(header.jwk, 'sha256'), jti, iat, nonce };
}
