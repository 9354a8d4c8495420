/** The storage OAuth needs: clients, pushed requests, consents, grants, codes, tokens, DPoP proofs. */
import type { User } from '../accounts/ports.js';
import type { IdTokenAlg } from '../oidc/ports.js';
import type { Log } from '../log.js';
import type { Instant } from '../time.js';
import type { ReplayCandidate } from './tokens/replay.js';

export type ClientType = 'confidential' | 'public';

export type ClientStatus = 'active' | 'deactivated';

export interface Client {
  clientId: string;
  name: string;
  description: string;
  homepageUrl: string;
  ownerId: number | null;
  type: ClientType;
  redirectUris: string[];
  allowedScopes: string[];
  status: ClientStatus;
  /** SHA-256 of the secret; `null` for public clients. */
  secretHash: string | null;
  /**
   * The secret the last rotation replaced: accepted beside the current one until `expiresAt` or
   * until the owner deletes it (`null`: none). Past `expiresAt` it is ignored wherever it is read.
   */
  previousSecret: { hash: string; expiresAt: Instant } | null;
  idTokenAlg: IdTokenAlg;
  /** Where RP-Initiated Logout 1.0 may send the browser back to; matched like `redirectUris`. */
  postLogoutRedirectUris: string[];
  /** Where Back-Channel Logout 1.0 logout tokens are POSTed; `null`: none are sent. */
  backchannelLogoutUri: string | null;
  /** RFC 9126 5: `/oauth/authorize` accepts only a `request_uri` from the PAR endpoint. */
  requirePushedAuthorizationRequests: boolean;
  /**
   * RFC 7591: the app registered itself at /api/oauth/register (INTERFACE section 13). It has no
   * owner, nobody at the site reviewed it, and it is deleted when it got no grant in 30 days.
   */
  selfRegistered: boolean;
  /**
   * A member registered it on the developer page: its owner is an account anyone can make, so
   * until staff verify it nobody answers for its redirect URIs (`isUnreviewedApp`).
   */
  memberRegistered: boolean;
  /** When staff marked it verified (INTERFACE section 14); `null`: not verified, as every app starts. */
  verifiedAt: Instant | null;
  createdAt: Instant;
  updatedAt: Instant;
}

/** What an app says about itself: its name, description and homepage, which its consent page shows. */
export type ClientDetails = Pick<Client, 'name' | 'description' | 'homepageUrl'>;

/**
 * What staff review of a client before they verify it: the details its consent page shows beside
 * "Verified by", and where it sends browsers and logout tokens.
 */
export type ReviewedClient = ClientDetails & Pick<Client, 'redirectUris' | 'postLogoutRedirectUris' | 'backchannelLogoutUri'>;

/** Staff's verified mark: set, for the client as they reviewed it, or removed. */
export type VerifiedMark = { verified: true; reviewed: ReviewedClient } | { verified: false };

/** Who changes a client's addresses or details: its owner on the developer page, or the operator. */
export type ClientChanger = 'owner' | 'operator';

export type NewClient = Omit<Client, 'createdAt' | 'updatedAt' | 'status' | 'previousSecret' | 'verifiedAt' | 'postLogoutRedirectUris' | 'backchannelLogoutUri' | 'requirePushedAuthorizationRequests' | 'selfRegistered' | 'memberRegistered'>
  & Partial<Pick<Client, 'postLogoutRedirectUris' | 'backchannelLogoutUri' | 'requirePushedAuthorizationRequests' | 'selfRegistered' | 'memberRegistered'>>;

export interface ClientStore {
  create(client: NewClient, now: Instant): Promise<Client>;
  findById(clientId: string): Promise<Client | undefined>;
  listByOwner(ownerId: number): Promise<Client[]>;
  /** How many of the owner's apps are active (deactivated ones not counted): the count a new one is judged by (`MAX_APPS_PER_OWNER`). */
  countActiveByOwner(ownerId: number): Promise<number>;
  /**
   * When the apps the owner registered on the developer pages (`memberRegistered`) after `since`
   * were registered, deactivated ones included, newest first, at most `limit`: what a new one is
   * judged by (`APP_REGISTRATIONS_PER_DAY`).
   */
  memberRegisteredSince(ownerId: number, since: Instant, limit: number): Promise<Instant[]>;
  /** Every client, oldest first (the operator's list; registrations are few). */
  listAll(): Promise<Client[]>;
  /**
   * Replaces an active confidential client's secret hash and keeps the one it replaces as the
   * previous secret until `previousExpiresAt` (with `null`, keeps none), in one write (an older
   * previous secret is dropped). Says whether the client existed, confidential and active (a
   * rotation racing staff deactivation must not give the deactivated app a secret).
   */
  rotateSecret(clientId: string, secretHash: string, previousExpiresAt: Instant | null, now: Instant): Promise<boolean>;
  /** Forgets an active client's previous secret; says whether there was one still accepted at `now`. */
  deletePreviousSecret(clientId: string, now: Instant): Promise<boolean>;
  /**
   * New redirect URIs. Changed by the app's `'owner'` (the developer page), URIs that differ from
   * the stored ones are the member's own claim: in the same write the app is marked
   * `memberRegistered` and loses its staff verification, which vouched for the old ones (attack84).
   * The `'operator'`'s change (the demo's move) leaves both. Only an active client's are replaced
   * (an owner's save racing staff deactivation); says whether they were.
   */
  setRedirectUris(clientId: string, redirectUris: string[], now: Instant, changedBy: ClientChanger): Promise<boolean>;
  /** New logout URIs of an active client, as `setRedirectUris`, whose rules for the `'owner'`'s change the post-logout redirect URIs follow. */
  setLogoutUris(clientId: string, uris: { postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null }, now: Instant, changedBy: ClientChanger): Promise<boolean>;
  /**
   * A new name, description and homepage. Any of them other than stored, changed by the
   * `'owner'`, ends a staff verification in the same write, which vouched for the details staff
   * saw beside "Verified by" (attack87, attack89); none is an address browsers are sent to, so
   * the app stays as it was marked. The `'operator'`'s change (the demo's move) leaves it.
   * Only an active client's are replaced (the owner's save racing staff deactivation); says
   * whether they were.
   */
  setDetails(clientId: string, details: ClientDetails, now: Instant, changedBy: ClientChanger): Promise<boolean>;
  setStatus(clientId: string, status: ClientStatus, now: Instant): Promise<Client | undefined>;
  /**
   * Marks the client verified by staff, or not; `undefined` when there is no such client, or when
   * verifying it and it no longer has exactly the name, description, homepage and addresses staff `reviewed`
   * (one conditional write, attack85, attack87: a change between the page and the form must not
   * be vouched for).
   */
  setVerified(clientId: string, mark: VerifiedMark, now: Instant): Promise<Client | undefined>;
  /** Whether an active client must push its authorization requests; says whether it was written (the client exists and is active). */
  setRequirePushedAuthorizationRequests(clientId: string, required: boolean, now: Instant): Promise<boolean>;
  /**
   * A client described by a client ID metadata document: inserted, or, when its row exists, its
   * name, homepage and redirect URIs replaced by the document's (status and creation time stay),
   * in one conditional write, which ends a staff verification when any of them differ (attack85,
   * attack87: staff vouched for what they saw).
   */
  saveDescribed(client: NewClient, now: Instant): Promise<void>;
}

/** A pushed authorization request (RFC 9126 2) as stored: by the hash of its `request_uri`'s random part. */
export interface PushedAuthorizationRequest {
  requestHash: string;
  clientId: string;
  /** The authorization request's parameters, each once, as pushed. */
  parameters: Array<[string, string]>;
  createdAt: Instant;
  expiresAt: Instant;
}

export interface PushedAuthorizationRequestStore {
  insert(request: PushedAuthorizationRequest): Promise<void>;
  /**
   * Marks the request used, keeps it until `openUntil` (the flow it opens), and returns its
   * parameters, in one conditional write that matches only an unused, unexpired request of
   * `clientId` (RFC 9126 4: single use, bound to the client). Of racing callers exactly one gets
   * it; a request named with another client_id stays as it was.
   */
  consume(requestHash: string, clientId: string, now: Instant, openUntil: Instant): Promise<PushedAuthorizationRequest | undefined>;
  /**
   * Completes a used, unexpired request (its answer is on its way to the client), in one
   * conditional write that deletes it; says whether this call did. Of racing callers exactly one does.
   */
  complete(requestHash: string, now: Instant): Promise<boolean>;
  /**
   * A used, unexpired request of `clientId`: one whose flow is under way, which sign-in returns
   * to by reference (RFC 9126 4). A read: it neither opens nor completes the request.
   */
  findOpen(requestHash: string, clientId: string, now: Instant): Promise<PushedAuthorizationRequest | undefined>;
}

/** A user's remembered consent to a client, for the union of scopes approved so far. */
export interface Consent {
  userId: number;
  clientId: string;
  scope: string;
  createdAt: Instant;
  updatedAt: Instant;
}

export interface ConsentStore {
  find(userId: number, clientId: string): Promise<Consent | undefined>;
  /** Records consent to `scope`, replacing what was remembered. */
  save(userId: number, clientId: string, scope: string, now: Instant): Promise<void>;
  /** Forgets the consent; returns whether there was one. */
  remove(userId: number, clientId: string): Promise<boolean>;
  /** Forgets every consent of the user; returns how many. */
  removeForUser(userId: number): Promise<number>;
  listForUser(userId: number): Promise<Consent[]>;
}

/**
 * A grant is one authorization of a client by a user: the family every code, access token and
 * refresh token issued from it descends from. Revoking it ends all of them (RFC 9700 4.14.2).
 */
export interface Grant {
  id: number;
  userId: number;
  clientId: string;
  scope: string;
  nonce: string | null;
  authTime: Instant;
  createdAt: Instant;
  lastUsedAt: Instant;
  revokedAt: Instant | null;
  revokedReason: string | null;
  /** The sign-in session it was approved in (`sessionSid`); its id_tokens carry it as `sid`. */
  sid: string | null;
  /** RFC 8176 methods of the sign-in that approved it (the id_token's `amr`); null for older grants. */
  amr: string[] | null;
  /** The RFC 8707 resource the authorization asked for; `null` when it named none. */
  resource: string | null;
}

export type RevocationReason =
  | 'code_reuse'
  | 'refresh_reuse'
  | 'revoked_by_client'
  | 'consent_withdrawn'
  | 'client_deactivated'
  | 'account_unusable'
  | 'reported_leaked';

/** A grant with its user: what a code or a refresh token gives tokens for. */
export interface GrantWithUser {
  grant: Grant;
  user: User;
}

export interface GrantStore {
  create(grant: { userId: number; clientId: string; scope: string; nonce: string | null; authTime: Instant; sid?: string | null; amr?: readonly string[] | null }, now: Instant): Promise<Grant>;
  findById(id: number): Promise<Grant | undefined>;
  /** A grant and its user, in one read (what issuing or introspecting a token checks). */
  findWithUser(id: number): Promise<GrantWithUser | undefined>;
  /** Marks one grant revoked, once; returns whether this call revoked it. */
  revoke(id: number, reason: RevocationReason, now: Instant): Promise<boolean>;
  /** Revokes every live grant of this user for this client; returns how many. */
  revokeForUserAndClient(userId: number, clientId: string, reason: RevocationReason, now: Instant): Promise<number>;
  revokeForClient(clientId: string, reason: RevocationReason, now: Instant): Promise<number>;
  /** Revokes every live grant of this user; returns the client of each grant it revoked. */
  revokeForUser(userId: number, reason: RevocationReason, now: Instant): Promise<string[]>;
  /**
   * Deletes every grant of the user, revoked or not, and with them (foreign keys) every code,
   * access and refresh token of theirs: the member's own deletion, after `revokeForUser`.
   */
  eraseForUser(userId: number): Promise<void>;
  /**
   * The clients this user holds a live grant with that was approved in one of the sign-in
   * sessions `sids` (the grant's `sid`), each client and session once.
   */
  liveClientsOfSessions(userId: number, sids: readonly string[]): Promise<Array<{ clientId: string; sid: string }>>;
  /** Records a use of the grant at `now` as its last use, unless a later one is recorded: the time only moves forward. */
  touch(id: number, now: Instant): Promise<void>;
  /** Per client, the live grants of a user: first authorized and last used. */
  summarizeForUser(userId: number): Promise<Array<{ clientId: string; firstAuthorizedAt: Instant; lastUsedAt: Instant }>>;
}

export interface AuthorizationCode {
  codeHash: string;
  grantId: number;
  clientId: string;
  userId: number;
  redirectUri: string;
  scope: string;
  codeChallenge: string | null;
  nonce: string | null;
  authTime: Instant;
  createdAt: Instant;
  expiresAt: Instant;
  usedAt: Instant | null;
  /** RFC 9449 10: the `dpop_jkt` of the authorization request; the token request must prove that key. */
  dpopJkt: string | null;
}

/** A code as a token request presents it, with what it must be bound to. */
export interface PresentedCode {
  codeHash: string;
  clientId: string;
  redirectUri: string;
  /** The S256 challenge of the request's `code_verifier`; `null` when none was sent. */
  codeChallenge: string | null;
  /** The thumbprint of the request's DPoP proof key; `null` or absent without a proof. */
  dpopJkt?: string | null;
}

/** A code to store with the grant made for it (`CodeStore.insertUnderNewGrant`). */
export type NewCodeUnderGrant = Omit<AuthorizationCode, 'usedAt' | 'grantId' | 'dpopJkt'> & { amr?: readonly string[] | null; dpopJkt?: string | null; resource?: string | null };

export interface CodeStore {
  insert(code: Omit<AuthorizationCode, 'usedAt' | 'dpopJkt'> & { dpopJkt?: string | null }): Promise<void>;
  /**
   * Stores a new grant made of the code's user, client, scope, nonce, `auth_time` and `amr`
   * (created and last used at the code's `createdAt`) and the sign-in session's `sid`, and the
   * code under it: both or neither, in one statement where the database can, else in a
   * transaction (the caller's, or one of its own).
   */
  insertUnderNewGrant(code: NewCodeUnderGrant, sid: string | null): Promise<void>;
  /**
   * `insertUnderNewGrant`, but only while the user's account is active, held until the write
   * commits (`UserStore.holdActive`: a deletion or suspension racing it waits, or is seen), and
   * the user's remembered consent for the code's client holds every scope of the code (INTERFACE
   * section 10), decided by the same statement that writes where the database can (else in a
   * transaction with the reads); whether it was stored.
   */
  insertUnderRememberedConsent(code: NewCodeUnderGrant, sid: string | null): Promise<boolean>;
  /**
   * Marks the code used and returns it, in one conditional write: of any number of racing
   * callers exactly one gets the code (RFC 6749 4.1.2: single use). Others get `undefined`, and
   * so does a request that does not match what the code is bound to (another client, another
   * redirect URI, a verifier that is not the challenge's, a DPoP key that is not its `dpopJkt`, an
   * expired code): such a code stays as
   * it was, so whoever merely saw it cannot burn it (INTERFACE section 3). With it comes its grant
   * and user (`granted`, absent if the grant is gone), read in the same statement where the
   * database can.
   */
  consume(presented: PresentedCode, now: Instant): Promise<{ code: AuthorizationCode; granted: GrantWithUser | undefined } | undefined>;
  /**
   * Redeems a code (RFC 6749 4.1.3): consumes it as `consume` does, in one conditional write, and
   * stores the tokens `how.issue` makes for it, both or neither. `how.refusal` says why a consumed
   * code's grant gives no tokens (gone or revoked, its user no longer active): such a code stays
   * used and nothing is stored. `how.issue` runs before the consuming write, with the code as read,
   * unused, and no transaction open; the write then stores the tokens only while the grant is
   * still live and its user active. It answers `undefined` when the request does not match the
   * code (nothing is written then), and whatever it throws leaves the code unused.
   */
  redeem<T>(presented: PresentedCode, now: Instant, how: CodeRedemption<T>): Promise<Redemption<T>>;
  find(codeHash: string): Promise<AuthorizationCode | undefined>;
}

/** What `CodeStore.redeem` stores with a code's consumption, and the answer made with it. */
export interface CodeIssuance<T> {
  access: NewIssuedToken;
  refresh: NewIssuedToken;
  /** Whether the grant's "last used" time is due to be written (to the minute). */
  touchGrant: boolean;
  answer: T;
}

/** The token endpoint's rules for a code being redeemed (`CodeStore.redeem`). */
export interface CodeRedemption<T> {
  refusal(granted: GrantWithUser | undefined): string | undefined;
  issue(code: AuthorizationCode, granted: GrantWithUser): Promise<CodeIssuance<T> | undefined>;
  /**
   * Where a failure the store absorbs, its answer standing without it, is reported: the token
   * request's log, whose lines carry the request's id; without it, the database's (`reportTo`).
   */
  log?: Log;
}

export type Redemption<T> =
  | { kind: 'issued'; answer: T }
  /** Consumed, but its grant gives no tokens (`CodeRedemption.refusal`'s reason). */
  | { kind: 'refused'; reason: string }
  /** Unknown, used, or not this request's (another client, verifier, redirect URI, key; expired): left as it was. */
  | { kind: 'not_consumed' };

export interface IssuedToken {
  id: number;
  tokenHash: string;
  grantId: number;
  clientId: string;
  userId: number;
  scope: string;
  createdAt: Instant;
  expiresAt: Instant;
  revokedAt: Instant | null;
  /** RFC 7638 thumbprint of the DPoP key the token is bound to (RFC 9449 6); `null`: a bearer token. */
  dpopJkt: string | null;
  /** The RFC 8707 resource the token is for alone (its audience); `null`: none was named. */
  resource: string | null;
}

export interface RefreshToken extends IssuedToken {
  usedAt: Instant | null;
}

export type NewIssuedToken = Omit<IssuedToken, 'id' | 'revokedAt' | 'dpopJkt' | 'resource'> & { dpopJkt?: string | null; resource?: string | null };

/** What the resource API needs to decide on a bearer token, found in one lookup. */
/**
 * What one bearer lookup returns: the token, what it descends from, and its user's row, so the
 * resource API answers `/me` without a second read (issue 8).
 */
export interface BearerRecord {
  tokenId: number;
  user: User;
  /** `null` for personal tokens. */
  clientId: string | null;
  /** The grant an OAuth access token descends from (for `grants.touch`); `null` for personal tokens. */
  grantId: number | null;
  scope: string;
  expiresAt: Instant | null;
  /** Set when the token or anything it descends from (its grant) was revoked. */
  revokedAt: Instant | null;
  /** The DPoP key an OAuth access token is bound to (RFC 9449 6); `null`: a bearer token (personal tokens always). */
  dpopJkt: string | null;
  /** The RFC 8707 resource an OAuth access token is for alone; `null`: none was named (personal tokens always). */
  resource: string | null;
}

/**
 * A refresh token just rotated, whose successor is being stored: the old row records the
 * successor's hash and the successor's answer sealed for a replay (`null`: none kept), and the
 * token that the old one succeeded loses its sealed answer, now that its successor is used
 * (INTERFACE section 11).
 */
export interface Succession {
  tokenId: number;
  tokenHash: string;
  sealed: string | null;
}

/** What `TokenStore.rotate` stores with a refresh token's consumption, and the answer made with it. */
export interface RotationIssuance<T> {
  access: NewIssuedToken;
  refresh: NewIssuedToken;
  /** Whether the grant's "last used" time is due to be written (to the minute). */
  touchGrant: boolean;
  /** The new refresh token recorded as the old one's successor: only when `RefreshRotation.recordsSuccessor`. */
  succeeds?: Succession;
  answer: T;
}

/** The token endpoint's rules for a refresh token being rotated (`TokenStore.rotate`). */
export interface RefreshRotation<T> {
  /**
   * Whether `issue` may record a successor (a replay window is open, INTERFACE section 11). Such a
   * rotation consumes first, in a transaction: the successor's record also erases the sealed answer
   * of the token's predecessor, and a family's revocation takes their rows in that order
   * (`revokeByGrant`).
   */
  recordsSuccessor: boolean;
  /** Throws the refusal of this token (unused and unrevoked) for this request; returns when it may be rotated. */
  check(token: RefreshToken, granted: GrantWithUser | undefined): void;
  /** The new pair for a token `check` let through; a throw leaves the token as it was. */
  issue(token: RefreshToken, granted: GrantWithUser): Promise<RotationIssuance<T>>;
}

export interface TokenStore {
  insertAccess(token: NewIssuedToken): Promise<IssuedToken>;
  insertRefresh(token: NewIssuedToken): Promise<RefreshToken>;
  /**
   * Stores a new access token and its refresh token; in one round trip where the database can.
   * With `succeeds`, the refresh token is the successor of a token just rotated, and the same
   * write records it there (see `Succession`).
   */
  insertPair(access: NewIssuedToken, refresh: NewIssuedToken, succeeds?: Succession): Promise<void>;
  findAccess(tokenHash: string): Promise<IssuedToken | undefined>;
  findRefresh(tokenHash: string): Promise<RefreshToken | undefined>;
  /** The access token with its grant's revocation and its user's status, in one query. */
  findAccessBearer(tokenHash: string): Promise<BearerRecord | undefined>;
  /**
   * Marks a live refresh token used and returns it, in one conditional write: of racing
   * callers exactly one rotates it (RFC 9700 4.14.2). Others get `undefined`. With it comes its
   * grant and user, as `CodeStore.consume` does.
   */
  consumeRefresh(tokenHash: string, now: Instant): Promise<{ token: RefreshToken; granted: GrantWithUser | undefined } | undefined>;
  /**
   * Rotates a refresh token (RFC 6749 6, RFC 9700 4.14.2): consumes it in one conditional write,
   * of racing callers exactly one, and stores the pair `how.issue` makes for it, both or neither.
   * `how.check` throws the refusal of a token read unused and unrevoked (another client's, expired,
   * its grant or account ended, a DPoP key missing): nothing is then written and the token stays
   * as it was, as it does when `how.issue` throws. `undefined`: the token is unknown, used or
   * revoked, or a racing rotation or revocation took it first. When no successor is recorded, the
   * token is read first, the pair made from that read with no transaction open (the id_token's
   * signature included), then one write consumes it and stores the pair only while it, its grant
   * and its user are still live; with a successor the consuming write comes first, in a
   * transaction with the pair's.
   */
  rotate<T>(tokenHash: string, now: Instant, how: RefreshRotation<T>): Promise<T | undefined>;
  /** A refresh token with its sealed answer and its successor's state, in one read (a replay's candidate). */
  findReplay(tokenHash: string): Promise<ReplayCandidate | undefined>;
  /**
   * Marks `clientId`'s access token revoked while it is live (not revoked, not expired at `now`,
   * its grant live: not revoked, its member active), in one conditional write; its member and
   * grant when it did. A token that had ended already is left as it is, so its revocation is
   * counted once, under what ended it (attack144 A); another client's token and an unknown one
   * are the same statement changing nothing (read whole before, they differed by 15–40 µs).
   */
  revokeAccess(tokenHash: string, clientId: string, now: Instant): Promise<{ userId: number; grantId: number } | undefined>;
  /** Marks every token of the grant revoked (the grant itself is revoked by `GrantStore`). */
  revokeByGrant(grantId: number, now: Instant): Promise<number>;
}

/**
 * The proofs of possession already accepted (RFC 9449 11.1: a DPoP proof is accepted once), by a
 * key derived from the proof's key and `jti`, shared by every instance: Redis when configured,
 * else the database.
 */
export interface DpopReplayStore {
  /**
   * Records `key` until `expiresAt`, in one conditional write; `false` when it is recorded and not
   * expired (a replayed proof). Of racing callers exactly one gets `true`.
   */
  claim(key: string, expiresAt: Instant, now: Instant): Promise<boolean>;
}
