/** DPoP keys and proofs (RFC 9449 4.2) as a client makes them, with every part open to tampering. */
import { randomBytes } from 'node:crypto';
import { type CryptoKey, type JWK, SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { accessTokenHash } from '../../src/core/oauth/dpop/proof.js';

export interface DpopKey {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
  /** RFC 7638 thumbprint. */
  jkt: string;
}

export async function dpopKey(alg: 'ES256' | 'EdDSA' | 'PS256' | 'RS256' = 'ES256'): Promise<DpopKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

export interface ProofOptions {
  htm?: string;
  htu: string;
  nonce?: string;
  /** Sets `ath` to this token's hash. */
  accessToken?: string;
  /** Seconds; now (from `nowMs`) by default. */
  iat?: number;
  nowMs?: number;
  jti?: string;
  /** Replaces or adds header members (`typ`, `jwk`, `alg`). */
  header?: Record<string, unknown>;
  /** Claims besides the usual ones, or replacing them. */
  claims?: Record<string, unknown>;
}

export async function dpopProof(key: DpopKey, options: ProofOptions): Promise<string> {
  const iat = options.iat ?? Math.floor((options.nowMs ?? Date.now()) / 1000);
  const payload: Record<string, unknown> = {
    htm: options.htm ?? 'POST',
    htu: options.htu,
    jti: options.jti ?? randomBytes(16).toString('base64url'),
    iat,
    ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.claims,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...options.header } as never)
    .sign(key.privateKey);
}

/** A proof signed with the `none` algorithm (RFC 7519 6.1): what a forger sends. */
export function unsignedProof(key: DpopKey, htu: string, nowMs: number): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${part({ htm: 'POST', htu, jti: 'x', iat: Math.floor(nowMs / 1000) })}.`;
}
