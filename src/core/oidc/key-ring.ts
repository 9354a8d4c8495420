/**
 * The signing keys as the server uses them: the current key per algorithm for signing, and
 * every key still inside its verification window for the JWKS (RFC 7517). Keys are read from
 * the database and cached briefly, so a rotation by `svc keys rotate` or by another instance
 * reaches every instance within `CACHE_MS`.
 */
import { type JWK, importJWK } from 'jose';
import { RETIRED_KEY_VISIBLE_MS, openPrivateJwk } from '../keys.js';
import type { IdTokenAlg, SigningKey, Stores } from '../ports.js';
import type { Clock } from '../time.js';

const CACHE_MS = 30_000;
/** Public JWK members; anything else (d, p, q, dp, dq, qi, oth, k…) never leaves. */
const PUBLIC_MEMBERS = ['kty', 'kid', 'use', 'alg', 'n', 'e', 'crv', 'x', 'y'] as const;

export interface CurrentKey {
  kid: string;
  alg: IdTokenAlg;
  privateKey: CryptoKey | Uint8Array;
}

export function publicJwk(stored: string): JWK {
  const full = JSON.parse(stored) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS) if (full[member] !== undefined) out[member] = full[member];
  return out as JWK;
}

export class KeyRing {
  private cache: { loadedAt: number; keys: SigningKey[]; jwks: { keys: JWK[] } } | undefined;
  private readonly imported = new Map<string, Promise<CryptoKey | Uint8Array>>();

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly keysSecret: string | undefined,
  ) {}

  private async load() {
    const now = this.clock.now();
    if (this.cache && now - this.cache.loadedAt < CACHE_MS && now >= this.cache.loadedAt) return this.cache;
    const keys = await this.stores.keys.listUsable(now - RETIRED_KEY_VISIBLE_MS);
    this.cache = { loadedAt: now, keys, jwks: { keys: keys.map((k) => publicJwk(k.publicJwk)) } };
    return this.cache;
  }

  /** Forgets the cached keys, so the next use reads the database (after a rotation here). */
  invalidate(): void {
    this.cache = undefined;
  }

  /** The JWKS document: public members only, current and still-verifiable keys. */
  async jwks(): Promise<{ keys: JWK[] }> {
    return (await this.load()).jwks;
  }

  /** The newest unretired key of `alg`. */
  async current(alg: IdTokenAlg): Promise<CurrentKey> {
    const { keys } = await this.load();
    const key = keys.find((k) => k.alg === alg && k.retiredAt === null);
    if (!key) throw new Error(`no current ${alg} signing key`);
    let privateKey = this.imported.get(key.kid);
    if (!privateKey) {
      privateKey = importJWK(JSON.parse(openPrivateJwk(key.privateJwk, this.keysSecret)) as JWK, alg);
      this.imported.set(key.kid, privateKey);
    }
    return { kid: key.kid, alg, privateKey: await privateKey };
  }
}
