/**
 * The refresh replay window (INTERFACE section 11), off by default: seed section 3 rule 3 says a
 * refresh "invalidates the old one immediately". Strict rotation (RFC 9700 4.14.2) logs a user out
 * when two tabs refresh at once or a token answer is lost on the way: the client presents the
 * rotated token again and the family is revoked. An operator may open the window, and then only
 * for a token whose presenter proves more than holding it (`replayWindowApplies`). Grace periods (Hydra,
 * Keycloak) mint a new pair for every reuse, so a thief racing the client gets a family of its
 * own. Here a rotated token presented again, by its own client, within REFRESH_REPLAY_SECONDS,
 * while its successor is unused, gets *the same* successor answer again: no new token exists, so
 * whoever holds the old token learns only what its rightful holder already got, and the first
 * use of the successor by anyone closes the window for good.
 *
 * The answer is kept sealed with AES-256-GCM under a key derived by HKDF-SHA-256 from the rotated
 * token itself, which the database never holds (only its SHA-256, a different function of it):
 * a copy of the database opens no answer, so it holds no usable token.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Client, RefreshToken } from '../ports.js';
import type { Instant } from '../../time.js';

/** What a replay answers: the strings of the successor's token response, and what it was asked with. */
export interface ReplayAnswer {
  accessToken: string;
  refreshToken: string;
  idToken?: string;
  /** The access token's scope, as the first answer said. */
  scope: string;
  /** The access token's lifetime at issue, in seconds. */
  expiresIn: number;
  issuedAt: Instant;
  /** The `scope` parameter of the rotation, normalised; `null` when none was sent. A replay must ask the same. */
  requestedScope: string | null;
  /**
   * The rotation's RFC 8707 `resource`; `null` when none was sent (absent in answers sealed
   * before it was kept: none). A replay must name the same, or it would get a token for another audience.
   */
  requestedResource?: string | null;
  /**
   * The DPoP key the successors are bound to (RFC 9449 5); `null`: Bearer. A replay must prove
   * the same key, as a refresh of a bound token must: the old token alone never yields them.
   */
  dpopJkt: string | null;
}

/** The longest window an operator may open. */
export const REFRESH_REPLAY_MAX_SECONDS = 300;

/**
 * How long after its token's use every instance keeps a sealed answer (the janitor erases it
 * then), whatever its own window: instances of a rolling deploy may differ, and a rotation without
 * a window erases nothing, so an answer sealed before the window was turned off would otherwise
 * stay until its token is deleted. The longest window and a minute: instances' clocks disagree a
 * little, and a replay reads the time before the answer, so an answer erased exactly at the
 * window's end made a replay the window honours reuse, which ends the family.
 */
export const SEALED_ANSWER_KEPT_MS = (REFRESH_REPLAY_MAX_SECONDS + 60) * 1000;

const INFO = 'svc refresh replay v1';
/** RFC 5869 2.2: no salt is a salt of HashLen zeros. */
const NO_SALT = Buffer.alloc(32);
/** RFC 5869 2.3: the info and the one-byte counter of the first (and only) output block. */
const INFO_BLOCK = Buffer.concat([Buffer.from(INFO), Buffer.from([1])]);
const VERSION = 'r1.';

/**
 * HKDF-SHA-256 (RFC 5869) of the token, 32 bytes: extract, then one expand block. Written out
 * with HMAC because `hkdfSync` makes a key object per call and costs twice as much; the output
 * is the same (test/core/refresh-replay.test.ts checks it against `hkdfSync`).
 */
function keyOf(token: string): Buffer {
  const pseudorandomKey = createHmac('sha256', NO_SALT).update(token).digest();
  return createHmac('sha256', pseudorandomKey).update(INFO_BLOCK).digest();
}

/** `answer` sealed under a key derived from `token`, bound to its row by `tokenHash` (the AAD). */
export function sealReplay(token: string, tokenHash: string, answer: ReplayAnswer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(token), iv);
  cipher.setAAD(Buffer.from(tokenHash));
  const body = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The sealed answer, or `undefined` when `token` does not open it (another token, a damaged row). */
export function openReplay(token: string, tokenHash: string, sealed: string): ReplayAnswer | undefined {
  if (!sealed.startsWith(VERSION)) return undefined;
  const raw = Buffer.from(sealed.slice(VERSION.length), 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(token), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(tokenHash));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as ReplayAnswer;
  } catch {
    return undefined;
  }
}

/** A rotated refresh token as a replay finds it: its row, its sealed answer, and its successor's state. */
export interface ReplayCandidate {
  token: RefreshToken;
  sealed: string | null;
  /** The successor refresh token's use and revocation; `undefined` when it is gone. */
  successor: { usedAt: Instant | null; revokedAt: Instant | null } | undefined;
}

/**
 * Whether a refresh token may ever be answered again (INTERFACE section 11): only a confidential
 * client's, which the token endpoint authenticated with its secret (RFC 6749 2.3.1), or a token
 * bound to a DPoP key (RFC 9449 5), whose replay needs a proof of that key. A public client's
 * bearer token has neither: a replay of it cannot be told from theft (RFC 9700 4.14.2), so it
 * always ends the family.
 */
export function replayWindowApplies(client: Pick<Client, 'type'>, boundJkt: string | null): boolean {
  return client.type === 'confidential' || boundJkt !== null;
}

/**
 * Whether a rotated token presented again is a replay (the same answer again) rather than reuse
 * (RFC 9700 4.14.2: the family is revoked): its own client (RFC 6749 10.4), one the window applies
 * to, within the window of its rotation, its successor neither used nor revoked, and an answer
 * sealed for it.
 */
export function isReplay(candidate: ReplayCandidate, client: Pick<Client, 'clientId' | 'type'>, now: Instant, windowSeconds: number): candidate is ReplayCandidate & { sealed: string } {
  const { token, sealed, successor } = candidate;
  if (windowSeconds <= 0 || sealed === null || !replayWindowApplies(client, token.dpopJkt)) return false;
  if (token.clientId !== client.clientId || token.usedAt === null || token.revokedAt !== null) return false;
  if (now - token.usedAt > windowSeconds * 1000) return false;
  return successor !== undefined && successor.usedAt === null && successor.revokedAt === null;
}
