/**
 * Data a run of the newer paths (issue 20 item 5) makes just before it starts, outside the
 * measured time, because it must be fresh when wrk sends it: DPoP proofs carry the server's
 * current nonce and are accepted once each; a TOTP code is of the current time step.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type CryptoKey, type JWK, SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { totpCode } from '../src/core/accounts/totp.js';
import { systemClock } from '../src/core/time.js';

type WriteLines = (name: string, lines: readonly string[]) => string;

/**
 * One client's DPoP key (ES256) and the proofs of its requests: a file per run with a line
 * `token<TAB>proof` per request wrk may send (get.lua), `perSecond` of them per second of the run.
 */
export class DpopProofs {
  private constructor(private readonly privateKey: CryptoKey, private readonly jwk: JWK, readonly jkt: string) {}

  static async create(): Promise<DpopProofs> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    return new DpopProofs(privateKey, jwk, await calculateJwkThumbprint(jwk, 'sha256'));
  }

  /** The nonce the server asks for (RFC 9449 9): the `DPoP-Nonce` of its refusal of a proof without one. */
  async serverNonce(url: string, token: string): Promise<string> {
    const answer = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await this.proof('GET', url, token) } });
    const nonce = answer.headers.get('dpop-nonce');
    if (answer.status !== 401 || !nonce) throw new Error(`expected a 401 with DPoP-Nonce for a proof without a nonce, got ${answer.status}`);
    return nonce;
  }

  /** A proof of `method url` for a request with `token` (RFC 9449 4.2, `ath` of 7.1). */
  proof(method: string, url: string, token: string, nonce?: string): Promise<string> {
    const ath = createHash('sha256').update(token).digest('base64url');
    return new SignJWT({ htm: method, htu: url, ath, jti: randomUUID(), ...(nonce === undefined ? {} : { nonce }) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: this.jwk })
      .setIssuedAt()
      .sign(this.privateKey);
  }

  /** get.lua's file for a run of `seconds`: GET `url` with the bound `tokens` in turn, a fresh proof each. */
  async file(writeLines: WriteLines, name: string, url: string, tokens: readonly string[], seconds: number, perSecond: number): Promise<string> {
    const nonce = await this.serverNonce(url, tokens[0]!);
    const lines: string[] = [];
    for (let i = 0; i < seconds * perSecond; i++) {
      const token = tokens[i % tokens.length]!;
      lines.push(`${token}\t${await this.proof('GET', url, token, nonce)}`);
    }
    return writeLines(name, lines);
  }
}

/** A CSRF pair for the sign-in form, from `GET /login`: the cookie (name=value) and the form field. */
export async function signInCsrf(baseUrl: string): Promise<{ cookie: string; field: string }> {
  const answer = await fetch(`${baseUrl}/login`);
  const cookie = answer.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => /csrf=/.test(c));
  const field = /name="_csrf" value="([^"]+)"/.exec(await answer.text())?.[1];
  if (!cookie || !field) throw new Error(`GET /login gave no CSRF pair (status ${answer.status})`);
  return { cookie, field };
}

/** The code an authenticator app with `secret` shows now. */
export function currentTotpCode(secret: string): string {
  return totpCode(secret, systemClock.now());
}
