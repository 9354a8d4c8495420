/**
 * DPoP proofs as a request presents them (RFC 9449 4.3): the rules of `checkProof`, then the
 * server nonce (8, 9), then the `jti` replay check (11.1), shared by every instance through
 * `DpopReplayStore` (Redis or the database). The token endpoint and the resource API both call
 * `verify`; each turns a `DpopProofError` into its own answer (400 JSON, or 401 with a challenge).
 */
import { createHash } from 'node:crypto';
import type { DpopReplayStore } from '../ports.js';
import type { Clock } from '../../time.js';
import { type DpopNonces, NONCE_SLOT_SECONDS } from './nonces.js';
import { type ProofExpectations, DpopProofError, IAT_WINDOW_SECONDS, checkProof } from './proof.js';

/**
 * How much longer than its own `iat` window a proof is remembered, in seconds: every instance
 * judges `iat` by its own clock, so one whose clock runs behind accepts a proof for that much
 * longer. Redis forgets a key after a time counted from the claiming instance's clock (the
 * database compares the stored expiry with the asking instance's clock, and needs no margin); a
 * nonce already holds across instances a slot apart (`DpopNonces`), so a slot of skew is allowed
 * here too (attack94).
 */
const REPLAY_MARGIN_SECONDS = NONCE_SLOT_SECONDS;

/** A proof as it arrived: the DPoP header's value (absent: no proof), and the request it came with. */
export interface PresentedProof {
  /** The `DPoP` header; `undefined` when the request had none. */
  proof: string | undefined;
  method: string;
  /** The request's absolute URL at the public address (BASE_URL and the path). */
  url: string;
}

export interface VerifiedProof {
  /** The RFC 7638 thumbprint of the proof's key. */
  jkt: string;
  /** A newer nonce to send in `DPoP-Nonce` (RFC 9449 8.2), when the proof's is no longer the current one. */
  nonce: string | undefined;
}

/**
 * A proof signed by another key than the one what it comes with is bound to (an access token, RFC
 * 9449 7.1; a refresh token or code, 5 and 10; PAR's `dpop_jkt`, 10.1): refused before its `jti`
 * is remembered, so one who holds a stolen token or code but not its key has the server write
 * nothing for every proof of their own key they send (attack94, helper-96). `jkt`: the proof's key.
 */
export class OtherKeyError extends Error {
  override readonly name = 'OtherKeyError';
  constructor(readonly jkt: string) {
    super('The DPoP proof is signed with another key than the one bound.');
  }
}

export class DpopVerifier {
  constructor(private readonly nonces: DpopNonces, private readonly replay: DpopReplayStore, private readonly clock: Clock) {}

  /** The nonce a client should use now (the `DPoP-Nonce` of an answer). */
  currentNonce(): Promise<string> {
    return this.nonces.current(this.clock.now());
  }

  /**
   * Verifies a proof; throws `DpopProofError`. Nonces are always required (docs/oauth.md, "DPoP"):
   * a proof without one, or with one no longer accepted, is `use_dpop_nonce` with a fresh nonce.
   * The `jti` is recorded last, so a proof refused for its nonce can be sent again with one.
   * `bound.jkt` is the key what the proof comes with is bound to, when known, and a proof of
   * another key throws `OtherKeyError`; at a resource, `bound.accessToken` is the access token the
   * proof came with (its `ath`).
   */
  async verify(presented: PresentedProof & { proof: string }, bound?: { accessToken?: string; jkt: string }): Promise<VerifiedProof> {
    const now = this.clock.now();
    const expected: ProofExpectations = { method: presented.method, url: presented.url, now, ...(bound?.accessToken === undefined ? {} : { accessToken: bound.accessToken }) };
    const checked = await checkProof(presented.proof, expected);
    const nonce = checked.nonce === undefined ? 'invalid' : await this.nonces.check(checked.nonce, now);
    if (nonce === 'invalid') {
      const fresh = await this.nonces.current(now);
      throw new DpopProofError('use_dpop_nonce', checked.nonce === undefined
        ? 'This server requires a nonce in DPoP proofs: make the proof again with the nonce of the DPoP-Nonce header.'
        : 'The DPoP proof\'s nonce has expired: make the proof again with the nonce of the DPoP-Nonce header.', fresh);
    }
    if (bound !== undefined && checked.jkt !== bound.jkt) throw new OtherKeyError(checked.jkt);
    // RFC 9449 11.1: a proof is accepted once. Its jti (per key) is remembered as long as its iat
    // keeps it acceptable, on an instance whose clock runs up to REPLAY_MARGIN_SECONDS behind too.
    const key = createHash('sha256').update(`${checked.jkt}.${checked.jti}`).digest('base64url');
    const expiresAt = (checked.iat + IAT_WINDOW_SECONDS + REPLAY_MARGIN_SECONDS + 1) * 1000;
    if (!(await this.replay.claim(key, expiresAt, now))) {
      throw new DpopProofError('invalid_dpop_proof', 'This DPoP proof was used already: make a new proof, with a new jti, for every request.');
    }
    return { jkt: checked.jkt, nonce: nonce === 'current' ? undefined : await this.nonces.current(now) };
  }
}
