/**
 * Passkeys (W3C Web Authentication Level 3) with @simplewebauthn/server: registration by a
 * signed-in user, sign-in with a passkey alone (discoverable credentials, user verification
 * required), and a passkey as the second step after a password. The relying party is the host
 * of BASE_URL and the only origin accepted is BASE_URL's (WebAuthn 7.1 steps 8–9, 7.2 steps 11–12).
 *
 * Challenges are made here and live 5 minutes; a response is accepted once (WebAuthn 13.4.3). A
 * registration or second-step challenge is its user's, stored and consumed by one conditional
 * write when a response names it. A sign-in challenge is no one's and is not stored: it carries
 * its end and a MAC under a key every instance shares, and only a response that verifies writes
 * it, by one insert that a replay cannot repeat. So asking for one costs no storage, and a script
 * asking without end at an address shared by many (a campus NAT) refuses none of them.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { ConflictError, InputError } from '../errors.js';
import type { Stores } from '../stores.js';
import type { User, UserStatus } from './ports.js';
import { checkedText } from '../text.js';
import { CLOCK_SKEW_MS, type Clock, type Instant } from '../time.js';
import type { SharedKeys } from '../credentials/shared-keys.js';
import type { ChallengePurpose, Passkey } from './ports.js';
import { type SiteNames, labelName } from '../site-name.js';
import { requireActiveAccount } from './accounts.js';

export const CHALLENGE_LIFETIME_MS = 5 * 60_000;
export const PASSKEY_NAME_MAX_LENGTH = 60;
/**
 * Passkeys one account may have. Each is sent in every registration's `excludeCredentials`, on the
 * security page and in its `signalAllAcceptedCredentials` list: a session and a virtual
 * authenticator would add them without end. A member has a few (a phone, a laptop, two security
 * keys); 20 leaves room for many devices and keeps every list short.
 */
export const MAX_PASSKEYS = 20;
/** A response as a browser sends it is a few kilobytes; nothing larger is parsed. */
const RESPONSE_MAX_LENGTH = 16_384;
const TIMEOUT_MS = 120_000;
/** A credential id as base64url: at most 1023 bytes (W3C WebAuthn, "Credential ID"). */
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1364}$/;

/**
 * A credential id the browser may be told to forget (signalUnknownCredential), as a response named
 * it (`id`, and `rawId` the same): base64url in the one spelling of its bytes, as stored ids are
 * spelled. Another spelling (the last character's unused bits set) names no stored passkey here,
 * but the browser decodes it to the bytes of one that may be the account's own, and forgets it.
 */
function forgettableCredentialId(response: { id: string; rawId?: unknown }): string | undefined {
  const { id, rawId } = response;
  return rawId === id && CREDENTIAL_ID.test(id) && Buffer.from(id, 'base64url').toString('base64url') === id ? id : undefined;
}

/**
 * @simplewebauthn/server, loaded on the first passkey ceremony: its certificate parsers are the
 * largest modules of the service, and most instances answer far more API requests than
 * ceremonies (docs/performance.md, decision 19).
 */
const webauthn = () => import('@simplewebauthn/server');

export interface PasskeyDeps {
  stores: Stores;
  clock: Clock;
  sharedKeys: SharedKeys;
  settings: { baseUrl: string; siteNames: SiteNames };
}

function relyingParty(baseUrl: string): { rpID: string; origin: string } {
  const url = new URL(baseUrl);
  return { rpID: url.hostname, origin: url.origin };
}

/**
 * The user handle an authenticator stores with the passkey (WebAuthn 14.6.1: no personal data):
 * a digest of the user id, the same for every passkey of the account.
 */
function userHandle(userId: number): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`svc-webauthn-user:${userId}`).digest().subarray(0, 16));
}

/**
 * What the security page tells the browser of the account's passkeys (WebAuthn Level 3,
 * signalAllAcceptedCredentials): the relying party and user handle the registration used, and the
 * credential ids stored now, so the device's passkey manager drops one of the account's that is
 * not among them (removed here, from any device) instead of offering it until a sign-in fails.
 */
export interface AcceptedCredentials { rpId: string; userId: string; allAcceptedCredentialIds: string[] }

export function acceptedCredentials(deps: Pick<PasskeyDeps, 'settings'>, userId: number, passkeys: readonly Pick<Passkey, 'credentialId'>[]): AcceptedCredentials {
  return {
    rpId: relyingParty(deps.settings.baseUrl).rpID,
    // As generateRegistrationOptions sent it: base64url of the same bytes.
    userId: Buffer.from(userHandle(userId)).toString('base64url'),
    allAcceptedCredentialIds: passkeys.map((p) => p.credentialId),
  };
}

/**
 * How the logs name a passkey: 16 characters of the SHA-256 of its credential id. Not the id
 * itself, which the authenticator chose and may be 1023 bytes long (W3C WebAuthn, "Credential
 * ID"); never the public key.
 */
export function passkeyRef(credentialId: string): string {
  return createHash('sha256').update(credentialId).digest('base64url').slice(0, 16);
}

/**
 * RFC 8176 methods a passkey's sign-in proves: a key held in hardware (or synced, `swk`), a user
 * present, and two factors (`mfa`). Alone, the authenticator verified its user by PIN or biometric
 * besides holding the key (`requireUserVerification` at sign-in: NIST SP 800-63B's multi-factor
 * cryptographic authenticator); as the second step, it follows the password. Apps that ask for a
 * multi-factor sign-in read `mfa`, as Okta's and Entra's id_tokens carry it.
 */
export function passkeyAmr(passkey: Pick<Passkey, 'backedUp'>): string[] {
  return [passkey.backedUp ? 'swk' : 'hwk', 'user', 'mfa'];
}

/** A passkey's name as stored. One left blank is named by the page it was added on, in its language. */
export function checkPasskeyName(name: string): string {
  return checkedText('name', name, { kind: 'name', max: PASSKEY_NAME_MAX_LENGTH, min: 1 });
}

/** The refusal of a passkey past `MAX_PASSKEYS`: a problem of the form, not of the name. */
function tooManyPasskeys(): InputError {
  return InputError.worded('passkey', `you have ${MAX_PASSKEYS} passkeys, the most an account can have; remove one before adding another`,
    { key: 'security.passkeyLimitReached', values: { max: MAX_PASSKEYS } });
}

/**
 * The refusal (field `passkey`) of a new passkey for an account that has `MAX_PASSKEYS` already,
 * none when it has room, said before the options are made: refused after the device's prompt, the
 * device would keep a passkey no account has. A read only: `registerPasskey` decides, holding the
 * account.
 */
export async function passkeyCapRefusal(deps: Pick<PasskeyDeps, 'stores'>, userId: number): Promise<InputError | undefined> {
  return await deps.stores.passkeys.countForUser(userId) >= MAX_PASSKEYS ? tooManyPasskeys() : undefined;
}

/**
 * A new random challenge, stored as the base64url text the browser's response will carry. The
 * library takes it as bytes: a string would be taken as UTF-8 text and encoded once more.
 */
async function saveChallenge(deps: PasskeyDeps, purpose: ChallengePurpose, userId: number | null): Promise<Uint8Array> {
  const bytes = new Uint8Array(randomBytes(32));
  const now = deps.clock.now();
  await deps.stores.passkeys.saveChallenge({ challenge: Buffer.from(bytes).toString('base64url'), purpose, userId, expiresAt: now + CHALLENGE_LIFETIME_MS }, now);
  return bytes;
}

const NONCE_BYTES = 32;
const END_BYTES = 8;
const MAC_BYTES = 32;

function challengeMac(key: Buffer, body: Uint8Array): Buffer {
  return createHmac('sha256', key).update('svc-webauthn-sign-in:').update(body).digest();
}

/** A sign-in challenge: 32 random bytes, its end (ms, big-endian) and a MAC over both. Nothing is stored. */
async function signedChallenge(deps: PasskeyDeps): Promise<Uint8Array> {
  const body = Buffer.alloc(NONCE_BYTES + END_BYTES);
  randomBytes(NONCE_BYTES).copy(body);
  body.writeBigUInt64BE(BigInt(deps.clock.now() + CHALLENGE_LIFETIME_MS), NONCE_BYTES);
  return new Uint8Array(Buffer.concat([body, challengeMac(await deps.sharedKeys.key('passkey-challenge-hmac'), body)]));
}

/**
 * A sign-in challenge this site made and that has not ended: its end, and its canonical spelling
 * (the bytes encoded anew: the decoder also takes padding, the base64 alphabet and spaces, so one
 * challenge has many spellings, and it is spent under this one); `undefined` for any other.
 */
async function signedChallengeEnd(deps: PasskeyDeps, challenge: string): Promise<{ end: Instant; canonical: string } | undefined> {
  const bytes = Buffer.from(challenge, 'base64url');
  if (bytes.length !== NONCE_BYTES + END_BYTES + MAC_BYTES) return undefined;
  const body = bytes.subarray(0, NONCE_BYTES + END_BYTES);
  if (!timingSafeEqual(bytes.subarray(NONCE_BYTES + END_BYTES), challengeMac(await deps.sharedKeys.key('passkey-challenge-hmac'), body))) return undefined;
  const end = Number(body.readBigUInt64BE(NONCE_BYTES));
  return end > deps.clock.now() ? { end, canonical: bytes.toString('base64url') } : undefined;
}

/** The options for `navigator.credentials.create()`: a discoverable credential, user verification required. */
export async function registrationOptions(deps: PasskeyDeps, user: User): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpID } = relyingParty(deps.settings.baseUrl);
  const existing = await deps.stores.passkeys.listForUser(user.id);
  return (await webauthn()).generateRegistrationOptions({
    rpName: labelName(deps.settings.siteNames),
    rpID,
    // The username, which never changes: the name the device shows needs no update later
    // (no signalCurrentUserDetails), as a nickname shown here would.
    userName: user.username,
    userDisplayName: user.username,
    userID: userHandle(user.id) as never,
    challenge: (await saveChallenge(deps, 'register', user.id)) as never,
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    // The same authenticator twice would be one passkey under two names.
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

/** The options for `navigator.credentials.get()`: any passkey of the site, or only `user`'s for a second step. */
export async function authenticationOptions(deps: PasskeyDeps, purpose: 'sign_in' | 'second_step', user?: User): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpID } = relyingParty(deps.settings.baseUrl);
  const allow = user ? await deps.stores.passkeys.listForUser(user.id) : [];
  return (await webauthn()).generateAuthenticationOptions({
    rpID,
    challenge: (purpose === 'sign_in' ? await signedChallenge(deps) : await saveChallenge(deps, purpose, user?.id ?? null)) as never,
    timeout: TIMEOUT_MS,
    userVerification: purpose === 'sign_in' ? 'required' : 'preferred',
    ...(user ? { allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports })) } : {}),
  });
}

function parseResponse<T>(text: string): T | undefined {
  if (text.length === 0 || text.length > RESPONSE_MAX_LENGTH) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    const shape = parsed as { id?: unknown; rawId?: unknown; type?: unknown; response?: unknown };
    if (typeof shape !== 'object' || shape === null || typeof shape.id !== 'string' || shape.type !== 'public-key'
      || typeof shape.response !== 'object' || shape.response === null) return undefined;
    return parsed as T;
  } catch {
    return undefined;
  }
}

/** A challenge check for the library: consumes the challenge, once, for `userId` (or anyone). */
function consuming(deps: PasskeyDeps, purpose: ChallengePurpose, accepts: (owner: number | null) => boolean) {
  return async (challenge: string): Promise<boolean> => {
    const found = await deps.stores.passkeys.consumeChallenge(challenge, purpose, deps.clock.now());
    return found !== undefined && accepts(found.userId);
  };
}

/**
 * The credential id a registration response names when no stored passkey has it: the device made
 * a passkey the site refused (its name, or a response that did not verify), which the browser may
 * forget (WebAuthn Level 3, signalUnknownCredential). `undefined` for one stored, or no id in its one
 * spelling (`forgettableCredentialId`).
 */
export async function unknownCredentialOf(deps: PasskeyDeps, responseText: string): Promise<string | undefined> {
  const response = parseResponse<RegistrationResponseJSON>(responseText);
  const id = response && forgettableCredentialId(response);
  if (id === undefined) return undefined;
  return (await deps.stores.passkeys.find(id)) ? undefined : id;
}

/**
 * A new passkey stored, or refused: `unknownCredentialId` names the passkey the device made, which
 * no account has and the browser may forget (WebAuthn Level 3, signalUnknownCredential), when this
 * request spent the response's challenge and then refused it. A response whose challenge it could
 * not spend (used by a copy of the same response sent at once, ended, another user's) names none:
 * the copy that spent it decides, and may be storing that very passkey as this one answers.
 */
export type PasskeyRegistration = { ok: true; passkey: Passkey } | { ok: false; unknownCredentialId?: string };

/**
 * Verifies a registration response from `user`'s browser and stores the passkey under `name`.
 * Refused when the response is malformed, its challenge unknown, used, expired or another user's,
 * or its attestation does not verify; `InputError` when the account has `MAX_PASSKEYS` already.
 */
export async function registerPasskey(deps: PasskeyDeps, user: User, responseText: string, name: string): Promise<PasskeyRegistration> {
  const label = checkPasskeyName(name);
  const response = parseResponse<RegistrationResponseJSON>(responseText);
  if (!response) return { ok: false };
  const { rpID, origin } = relyingParty(deps.settings.baseUrl);
  let spent = false;
  const consumes = consuming(deps, 'register', (owner) => owner === user.id);
  const refused = async (): Promise<PasskeyRegistration> => {
    const unknownCredentialId = spent ? await unknownCredentialOf(deps, responseText) : undefined;
    return unknownCredentialId === undefined ? { ok: false } : { ok: false, unknownCredentialId };
  };
  let verification;
  try {
    verification = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: async (challenge) => (spent = await consumes(challenge)),
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
    });
  } catch {
    return refused();
  }
  if (!verification.verified) return refused();
  const { credential, credentialBackedUp } = verification.registrationInfo;
  // One insert decides (the credential id is the key): two racing registrations of one passkey
  // cannot both land, and the loser is told, as a repeat is. The count is taken holding the
  // account's row (`requireActiveAccount`), so two racing at `MAX_PASSKEYS - 1` cannot both land:
  // the second waits for the first and counts its passkey.
  try {
    return { ok: true, passkey: await deps.stores.transaction(async (tx) => {
      await requireActiveAccount(tx, user.id, 'add a passkey');
      if (await tx.passkeys.countForUser(user.id) >= MAX_PASSKEYS) throw tooManyPasskeys();
      return tx.passkeys.insert({
        credentialId: credential.id,
        userId: user.id,
        name: label,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: (credential.transports ?? []).filter((t) => /^[a-z-]{1,20}$/.test(t)).slice(0, 8),
        backedUp: credentialBackedUp,
      }, deps.clock.now());
    }) };
  } catch (error) {
    if (error instanceof ConflictError) throw InputError.worded('passkey', 'that passkey is already registered', { key: 'problems.passkeyRegistered' });
    throw error;
  }
}

/**
 * A verified passkey with its account's status as the write that recorded the use found it (an
 * earlier read of the account may say otherwise), or a refusal with the stored passkey the
 * response named, if it named one (of `expectedUserId`, for a second step), for the logs to say
 * whose passkey failed; or the credential id it named that no stored passkey has
 * (`unknownCredentialId`), which the browser may forget (WebAuthn Level 3, signalUnknownCredential).
 */
export type PasskeyCheck = { ok: true; passkey: Passkey; status: UserStatus } | { ok: false; passkey?: Passkey; unknownCredentialId?: string };

/**
 * Verifies an authentication response: for a sign-in with a passkey alone (`purpose` sign_in,
 * user verification required) or a second step of `expectedUserId`.
 */
export async function authenticateWithPasskey(
  deps: PasskeyDeps,
  purpose: 'sign_in' | 'second_step',
  responseText: string,
  expectedUserId?: number,
): Promise<PasskeyCheck> {
  const response = parseResponse<AuthenticationResponseJSON>(responseText);
  if (!response) return { ok: false };
  const passkey = await deps.stores.passkeys.find(response.id);
  // No account here has it (removed, or its account deleted): the browser may be told to forget it.
  if (!passkey) {
    const unknownCredentialId = forgettableCredentialId(response);
    return unknownCredentialId === undefined ? { ok: false } : { ok: false, unknownCredentialId };
  }
  if (expectedUserId !== undefined && passkey.userId !== expectedUserId) return { ok: false };
  const refused = { ok: false, passkey } as const;
  const { rpID, origin } = relyingParty(deps.settings.baseUrl);
  let signed: { end: Instant; canonical: string } | undefined;
  const checksSigned = async (challenge: string): Promise<boolean> => {
    signed = await signedChallengeEnd(deps, challenge);
    return signed !== undefined;
  };
  let verification;
  try {
    verification = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: purpose === 'sign_in' ? checksSigned : consuming(deps, purpose, (owner) => owner === passkey.userId),
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')) as never,
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: purpose === 'sign_in',
    });
  } catch {
    return refused;
  }
  if (!verification.verified) return refused;
  // A sign-in challenge is spent only now, by a response that verified: a replay finds it written,
  // in any spelling. The row outlives the challenge's end by the clocks' skew: the janitor deletes
  // it by its own clock, and an instance whose clock runs behind still takes the challenge as live.
  if (signed && !await deps.stores.passkeys.spendChallenge({ challenge: signed.canonical, purpose, userId: null, expiresAt: signed.end + CLOCK_SKEW_MS }, deps.clock.now())) return refused;
  const status = await deps.stores.passkeys.recordUse(passkey.credentialId, verification.authenticationInfo.newCounter, deps.clock.now());
  if (status === undefined) return refused;
  return { ok: true, passkey: { ...passkey, backedUp: verification.authenticationInfo.credentialBackedUp }, status };
}
