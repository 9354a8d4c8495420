/**
 * What the core needs from the outside world, as small interfaces. Storage implements them
 * over Kysely (src/storage); tests run one contract suite against every implementation.
 * Lookups return `undefined` when nothing matches; they never throw for "not found".
 */
import type { PasskeyStore, PendingSignInStore, SecondFactorStore, SecurityEventStore } from './security/ports.js';
import type { TokenKind } from './credentials.js';
import type { Instant } from './time.js';
import type { ReplayCandidate } from './tokens/replay.js';

export type UserStatus = 'active' | 'suspended' | 'banned' | 'deleted';
export const USER_STATUSES: readonly UserStatus[] = ['active', 'suspended', 'banned', 'deleted'];

export interface User {
  id: number;
  username: string;
  status: UserStatus;
  bio: string;
  member: boolean;
  level: number;
  xp: number;
  createdAt: Instant;
  updatedAt: Instant;
}

export interface NewUser {
  username: string;
  passwordHash: string;
  bio: string;
  member: boolean;
  level: number;
  xp: number;
}

export interface Avatar {
  contentType: string;
  image: Uint8Array;
  updatedAt: Instant;
}

export interface UserStore {
  /** Throws `ConflictError` when the username is taken, in any letter case. */
  create(user: NewUser, now: Instant): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  /** Case-insensitive. */
  findByUsername(username: string): Promise<User | undefined>;
  /** The user and the password hash, for sign-in only. */
  findCredentials(username: string): Promise<{ user: User; passwordHash: string } | undefined>;
  /** `from`: only an account in that status changes (one conditional write); `undefined` otherwise. */
  setStatus(id: number, status: UserStatus, now: Instant, from?: UserStatus): Promise<User | undefined>;
  setBio(id: number, bio: string, now: Instant): Promise<boolean>;
  /** Replaces the password hash; returns whether the user exists. */
  setPasswordHash(id: number, passwordHash: string, now: Instant): Promise<boolean>;
  /** Up to `limit` users with an id above `afterId` (0: from the first), by id; of one status when given. */
  list(options: { afterId: number; limit: number; status?: UserStatus }): Promise<User[]>;
  /**
   * Stores the image as given, already encoded anew (`checkAvatarUpload`), and moves the
   * user's `updatedAt`, which versions the avatar's address on pages.
   */
  setAvatar(userId: number, contentType: string, image: Uint8Array, now: Instant): Promise<void>;
  findAvatar(userId: number): Promise<Avatar | undefined>;
  removeAvatar(userId: number): Promise<void>;
}

export type PostStatus = 'published' | 'draft';

/** A post as lists show it: everything but the body. */
export interface PostSummary {
  id: number;
  authorId: number;
  authorUsername: string;
  categoryId: number;
  categoryName: string;
  title: string;
  /** Plain text made from the body when the post was written (INTERFACE section 7). */
  excerpt: string;
  status: PostStatus;
  likeCount: number;
  commentCount: number;
  viewCount: number;
  createdAt: Instant;
  updatedAt: Instant;
}

/** A post as its page shows it. */
export interface Post extends PostSummary {
  /** Markdown (INTERFACE section 7). */
  body: string;
  /** The body rendered when the post was written: escaped, bounded HTML (`renderBody`). */
  bodyHtml: string;
}

export interface NewPost {
  authorId: number;
  categoryId: number;
  title: string;
  body: string;
  bodyHtml: string;
  excerpt: string;
  status: PostStatus;
  likeCount?: number;
  commentCount?: number;
  viewCount?: number;
}

/** What an edit replaces: the text and what is made from it at write time (`renderBody`). */
export interface PostEdit {
  categoryId: number;
  title: string;
  body: string;
  bodyHtml: string;
  excerpt: string;
  /** Publish a draft with the same write; a published post stays published either way. */
  publish: boolean;
}

export interface Comment {
  id: number;
  postId: number;
  authorId: number;
  authorUsername: string;
  body: string;
  createdAt: Instant;
}

export interface Category {
  id: number;
  name: string;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PostStore {
  /** The category with this name (any letter case), created when it is new. */
  ensureCategory(name: string): Promise<Category>;
  listCategories(): Promise<Category[]>;
  create(post: NewPost, now: Instant): Promise<Post>;
  findById(id: number): Promise<Post | undefined>;
  /** Published posts of one author, newest first, ties by id (newest id first). */
  listPublishedByAuthor(authorId: number, offset: number, limit: number): Promise<Page<PostSummary>>;
  /** An author's drafts, for the author only. */
  listDraftsByAuthor(authorId: number): Promise<PostSummary[]>;
  listRecentPublished(limit: number): Promise<PostSummary[]>;
  /**
   * Replaces the text of a post of `authorId` in one conditional write; a draft published by it
   * is dated `now`. False when that author has no post `id` (another's, or deleted).
   */
  edit(id: number, authorId: number, edit: PostEdit, now: Instant): Promise<boolean>;
  /** Publishes a draft of `authorId`, dated `now`, in one conditional write; false when there is no such draft. */
  publish(id: number, authorId: number, now: Instant): Promise<boolean>;
  /** Deletes a post of `authorId` with its comments and likes; false when that author has no post `id`. */
  delete(id: number, authorId: number): Promise<boolean>;
  countView(postId: number): Promise<void>;
  /** Likes once per user; returns whether this call added the like. */
  like(postId: number, userId: number, now: Instant): Promise<boolean>;
  addComment(postId: number, authorId: number, body: string, now: Instant): Promise<Comment>;
  listComments(postId: number): Promise<Comment[]>;
}

export type ClientType = 'confidential' | 'public';
export type ClientStatus = 'active' | 'deactivated';
export type IdTokenAlg = 'RS256' | 'ES256';

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
  idTokenAlg: IdTokenAlg;
  /** Where RP-Initiated Logout 1.0 may send the browser back to; matched like `redirectUris`. */
  postLogoutRedirectUris: string[];
  /** Where Back-Channel Logout 1.0 logout tokens are POSTed; `null`: none are sent. */
  backchannelLogoutUri: string | null;
  /** RFC 9126 5: `/oauth/authorize` accepts only a `request_uri` from the PAR endpoint. */
  requirePushedAuthorizationRequests: boolean;
  createdAt: Instant;
  updatedAt: Instant;
}

export type NewClient = Omit<Client, 'createdAt' | 'updatedAt' | 'status' | 'postLogoutRedirectUris' | 'backchannelLogoutUri' | 'requirePushedAuthorizationRequests'>
  & Partial<Pick<Client, 'postLogoutRedirectUris' | 'backchannelLogoutUri' | 'requirePushedAuthorizationRequests'>>;

export interface ClientStore {
  create(client: NewClient, now: Instant): Promise<Client>;
  findById(clientId: string): Promise<Client | undefined>;
  listByOwner(ownerId: number): Promise<Client[]>;
  /** Every client, oldest first (the operator's list; registrations are few). */
  listAll(): Promise<Client[]>;
  /** Replaces the secret hash; the old secret stops working at once. */
  setSecretHash(clientId: string, secretHash: string, now: Instant): Promise<boolean>;
  setRedirectUris(clientId: string, redirectUris: string[], now: Instant): Promise<boolean>;
  setLogoutUris(clientId: string, uris: { postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null }, now: Instant): Promise<boolean>;
  setStatus(clientId: string, status: ClientStatus, now: Instant): Promise<Client | undefined>;
  setRequirePushedAuthorizationRequests(clientId: string, required: boolean, now: Instant): Promise<boolean>;
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
   * The clients this user holds a live grant with that was approved in one of the sign-in
   * sessions `sids` (the grant's `sid`), each client and session once.
   */
  liveClientsOfSessions(userId: number, sids: readonly string[]): Promise<Array<{ clientId: string; sid: string }>>;
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

export interface CodeStore {
  insert(code: Omit<AuthorizationCode, 'usedAt' | 'dpopJkt'> & { dpopJkt?: string | null }): Promise<void>;
  /**
   * Stores a new grant made of the code's user, client, scope, nonce, `auth_time` and `amr`
   * (created and last used at the code's `createdAt`) and the sign-in session's `sid`, and the
   * code under it: both or neither, in one statement where the database can, else in a
   * transaction (the caller's, or one of its own).
   */
  insertUnderNewGrant(code: Omit<AuthorizationCode, 'usedAt' | 'grantId' | 'dpopJkt'> & { amr?: readonly string[] | null; dpopJkt?: string | null; resource?: string | null }, sid: string | null): Promise<void>;
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
  find(codeHash: string): Promise<AuthorizationCode | undefined>;
}

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
  /** A refresh token with its sealed answer and its successor's state, in one read (a replay's candidate). */
  findReplay(tokenHash: string): Promise<ReplayCandidate | undefined>;
  revokeAccess(tokenHash: string, now: Instant): Promise<boolean>;
  /** Marks every token of the grant revoked (the grant itself is revoked by `GrantStore`). */
  revokeByGrant(grantId: number, now: Instant): Promise<number>;
}

export interface PersonalToken {
  id: number;
  userId: number;
  name: string;
  scope: string;
  createdAt: Instant;
  expiresAt: Instant | null;
  lastUsedAt: Instant | null;
  revokedAt: Instant | null;
}

export interface PersonalTokenStore {
  insert(token: { userId: number; name: string; tokenHash: string; scope: string; expiresAt: Instant | null }, now: Instant): Promise<PersonalToken>;
  listForUser(userId: number): Promise<PersonalToken[]>;
  findBearer(tokenHash: string): Promise<BearerRecord | undefined>;
  /** Revokes the user's own token; returns whether this call revoked it. */
  revoke(id: number, userId: number, now: Instant): Promise<boolean>;
  /** Revokes every live token of the user; returns how many. */
  revokeForUser(userId: number, now: Instant): Promise<number>;
  touch(id: number, now: Instant): Promise<void>;
}

/** The SHA-256 hashes of the strings a leak report names, by the kind their prefix claims (INTERFACE section 2). */
export type LeakedHashes = Readonly<Record<TokenKind, readonly string[]>>;

/** A live credential a leak report named, revoked by that report; `tokenHash` says which string named it. */
export type RevokedLeak =
  | { kind: 'access' | 'refresh'; tokenHash: string; tokenId: number; userId: number; clientId: string; clientName: string; grantId: number }
  | { kind: 'personal'; tokenHash: string; tokenId: number; userId: number; name: string }
  | { kind: 'clientSecret'; tokenHash: string; clientId: string; ownerId: number | null; clientName: string };

export interface LeakRevocation {
  revoked: RevokedLeak[];
  /** The grants ended with a leaked refresh token (its whole family), for their back-channel logouts. */
  grants: Array<{ clientId: string; userId: number; sid: string | null }>;
}

/**
 * Leaked-credential reports (INTERFACE section 11): credentials found by the hash of the string
 * reported, a batch at a time, never one query per string.
 */
export interface LeakedCredentialStore {
  /** The hashes among these that name a credential ever issued, live or not (a scanner's true positive). */
  known(hashes: LeakedHashes): Promise<Set<string>>;
  /**
   * Revokes every live credential among `hashes` with conditional writes that return only the rows
   * they changed, so of racing reports of one credential exactly one revokes it (and tells its
   * owner). An access token ends alone (as RFC 7009 revocation does); a refresh token ends its
   * grant and every token of it (RFC 9700 4.14.2: the family); a client secret deactivates its
   * client and ends every grant of it. Run it inside a transaction: clients are written first,
   * then tokens, then grants, the order of every other revocation, so none deadlocks with it.
   * A rotated refresh token is live while its replay answer can still be given: rotated after
   * `replayOpenSince` with the answer still sealed (src/core/tokens/replay.ts), it ends its family too.
   */
  revoke(hashes: LeakedHashes, now: Instant, replayOpenSince: Instant): Promise<LeakRevocation>;
}

/** A key pair as generated, before it is stored with its times. */
export interface GeneratedSigningKey {
  /** The RFC 7638 thumbprint of the public key. */
  kid: string;
  alg: IdTokenAlg;
  publicJwk: string;
  /** The private JWK as JSON, or sealed with AES-256-GCM when KEYS_SECRET is set. */
  privateJwk: string;
}

export interface NewSigningKey extends GeneratedSigningKey {
  createdAt: Instant;
  /** When it starts signing; until then it is only published (INTERFACE section 5). */
  activeAt: Instant;
}

export interface SigningKey extends NewSigningKey {
  /** When it stops signing: its successor's `activeAt`, or the moment of an immediate rotation. */
  retiredAt: Instant | null;
  /** When it leaves the JWKS; the janitor deletes it from then on. */
  withdrawnAt: Instant | null;
}

export interface KeyStore {
  insert(key: NewSigningKey): Promise<void>;
  /**
   * Inserts `key` unless a key of its algorithm signs or waits to sign at `at` (not retired, not
   * withdrawn), and says whether it did: one step that no other caller's can interleave with, so
   * instances starting together on a new database end with one key per algorithm (INTERFACE
   * section 5: every instance signs with the same keys).
   */
  insertUnlessLive(key: NewSigningKey, at: Instant): Promise<boolean>;
  /** Every key, withdrawn ones included (the checks at start). */
  listAll(): Promise<SigningKey[]>;
  /** The keys still in the JWKS at `at` (not withdrawn by then), newest first. */
  listPublished(at: Instant): Promise<SigningKey[]>;
  /**
   * The keys of `alg` that sign at `at` or would start later stop signing at `at`, and leave the
   * JWKS at `withdrawnAt`; keys retired before `at` keep their times. Returns how many.
   */
  retire(alg: IdTokenAlg, at: Instant, withdrawnAt: Instant): Promise<number>;
  /** Every key of `alg` still published at `at` leaves the JWKS at `at` (after a compromise). */
  withdraw(alg: IdTokenAlg, at: Instant): Promise<number>;
}

export interface Session {
  idHash: string;
  userId: number;
  authTime: Instant;
  createdAt: Instant;
  lastSeenAt: Instant;
  expiresAt: Instant;
  /** RFC 8176 methods the sign-in passed: `['pwd']`, `['pwd', 'otp']`, `['hwk', 'user']`… */
  amr: string[];
  /** The browser's User-Agent at sign-in (at most 512 characters). */
  userAgent: string;
  /** The address the sign-in came from. */
  address: string;
}

/** A session to store: `amr` defaults to `['pwd']`, the browser's details to empty. */
export type NewSession = Omit<Session, 'lastSeenAt' | 'createdAt' | 'amr' | 'userAgent' | 'address'> & Partial<Pick<Session, 'amr' | 'userAgent' | 'address'>>;

export interface SessionStore {
  create(session: NewSession, now: Instant): Promise<Session>;
  /** A live session (not ended, not expired) and its user. */
  findLive(idHash: string, now: Instant): Promise<{ session: Session; user: User } | undefined>;
  /** The user's sessions not ended and not expired at `now`, latest activity first. */
  listForUser(userId: number, now: Instant): Promise<Session[]>;
  /** Records activity on a session (its idle time starts again). */
  touch(idHash: string, now: Instant): Promise<void>;
  /** Ends a session that was not ended yet; returns its user, only to the one call that ended it. */
  end(idHash: string, now: Instant): Promise<{ userId: number } | undefined>;
  endForUser(userId: number, now: Instant): Promise<number>;
  /** Ends every session of the user but `keepIdHash`; the ids (hashed) of those this call ended. */
  endOthersForUser(userId: number, keepIdHash: string, now: Instant): Promise<string[]>;
}

/** A back-channel logout to deliver (OpenID Back-Channel Logout 1.0 section 2.5). */
export interface NewLogoutDelivery {
  clientId: string;
  userId: number;
  /** The sign-in session that ended, or the grant's; `null`: the token carries `sub` alone. */
  sid: string | null;
  /** The logout token's `jti`, the same on every attempt. */
  jti: string;
  /** What caused it: `signed_out`, or the grant's revocation reason. */
  cause: string;
}

export interface LogoutDelivery extends NewLogoutDelivery {
  id: number;
  createdAt: Instant;
  /** Attempts so far, the one just claimed included. */
  attempts: number;
  nextAttemptAt: Instant;
  lastError: string | null;
}

/**
 * The durable queue of back-channel logouts (INTERFACE section 5): rows are written in the
 * transaction of the event that causes them, claimed by one instance at a time under a lease,
 * and marked delivered or abandoned. An outcome is written only by the claim that holds the row.
 */
export interface LogoutDeliveryStore {
  /** Queues deliveries, due at once. */
  insert(deliveries: NewLogoutDelivery[], now: Instant): Promise<void>;
  /** Whether a pending delivery is due at `now` and not leased: a read, so an idle poll writes nothing. */
  anyDue(now: Instant): Promise<boolean>;
  /**
   * Claims up to `limit` pending deliveries that are due and not leased (or whose lease has
   * expired: the instance that held it died), in one conditional write that records `claim`,
   * `leaseUntil` and one more attempt: two callers never get the same row while its lease runs.
   */
  claim(claim: string, now: Instant, leaseUntil: Instant, limit: number): Promise<LogoutDelivery[]>;
  /** Marks the delivery delivered; false when `claim` no longer holds it. */
  delivered(id: number, claim: string, now: Instant): Promise<boolean>;
  /** Releases the delivery to be tried again at `nextAttemptAt`. */
  retryAt(id: number, claim: string, nextAttemptAt: Instant, error: string): Promise<boolean>;
  /** Gives the delivery up for good. */
  abandon(id: number, claim: string, now: Instant, error: string): Promise<boolean>;
}

/** The columns that hold a secret the service must read back, sealed when KEYS_SECRET is set (`src/core/security/sealing.ts`). */
export type SealedColumn = 'signing_keys.private_jwk' | 'totp_credentials.secret' | 'server_secrets.value';

/** A value of a `SealedColumn` as stored, and the key of its row. */
export interface StoredSecret {
  row: string;
  stored: string;
}

/** Every `SealedColumn` alike, for the start that seals what was stored plain. */
export interface SealedColumnStore {
  /**
   * Up to `limit` values of `column` that do not start with `prefix`, in the order of their rows,
   * after the row `after` (when given).
   */
  listWithoutPrefix(column: SealedColumn, prefix: string, after: string | undefined, limit: number): Promise<StoredSecret[]>;
  /** One value of `column` that starts with `prefix`, if any. */
  findWithPrefix(column: SealedColumn, prefix: string): Promise<StoredSecret | undefined>;
  /** Replaces the value of `row` if it is still `stored` (one conditional write); whether it was. */
  replace(column: SealedColumn, row: string, stored: string, replacement: string): Promise<boolean>;
}

/** Random secrets the instances share, made by whichever asks first. */
export interface ServerSecretStore {
  /** The secret named `name`; `fresh` is stored when there is none yet, and the stored one returned. */
  getOrCreate(name: string, fresh: string, now: Instant): Promise<string>;
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

/**
 * New secrets waiting for the one page that shows them (post/redirect/get, issue 18 item 7):
 * sealed under a key the browser holds, so a row alone reveals nothing.
 */
export interface OneTimeSecretStore {
  put(entry: { idHash: string; userId: number; purpose: string; subject: string; sealed: string; expiresAt: Instant }, now: Instant): Promise<void>;
  /**
   * Deletes the live entry with this id for this user, purpose and subject, in one conditional
   * write, and returns its sealed value: of two reads, only one gets it.
   */
  take(idHash: string, match: { userId: number; purpose: string; subject: string }, now: Instant): Promise<string | undefined>;
}

/** Deletes what no rule needs any more, in small batches (issue 7's janitor). */
export interface Housekeeping {
  /**
   * `grantLifetimeMs`: how long an idle grant can still have a live token (the refresh lifetime).
   * `deliveryMaxAgeMs`: how long a back-channel logout is tried before it is given up.
   * `securityLogWindowMs`: how long the accounts' security log is kept.
   */
  purge(now: Instant, options: { auditWindowMs: number; batchSize: number; grantLifetimeMs: number; deliveryMaxAgeMs: number; securityLogWindowMs: number }): Promise<Record<string, number>>;
}

/** Every store, over one connection or one transaction. */
export interface Stores {
  users: UserStore;
  posts: PostStore;
  clients: ClientStore;
  consents: ConsentStore;
  grants: GrantStore;
  codes: CodeStore;
  tokens: TokenStore;
  personalTokens: PersonalTokenStore;
  keys: KeyStore;
  sessions: SessionStore;
  serverSecrets: ServerSecretStore;
  sealedColumns: SealedColumnStore;
  logoutDeliveries: LogoutDeliveryStore;
  secondFactors: SecondFactorStore;
  passkeys: PasskeyStore;
  pendingSignIns: PendingSignInStore;
  securityEvents: SecurityEventStore;
  pushedRequests: PushedAuthorizationRequestStore;
  leakedCredentials: LeakedCredentialStore;
  dpopProofs: DpopReplayStore;
  oneTimeSecrets: OneTimeSecretStore;
  housekeeping: Housekeeping;
  /** Runs `work` in one transaction: all of its writes land, or none (a crash mid-way loses nothing). */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}

/** A fixed-window counter (rate limits and sign-in throttling), in memory or shared in Redis. */
export interface RateLimiter {
  /** Counts one hit on `key` and says whether it is within `limit` for the window. */
  hit(key: string, limit: number, windowSeconds: number, now: Instant): Promise<RateLimitDecision>;
  /**
   * Takes back one hit on `key` in the window of `now` (never below zero): a sign-in is counted
   * before its password is checked, so racing guesses cannot pass the limit, and a success is
   * then taken back, so successes never count (INTERFACE section 4).
   */
  refund(key: string, windowSeconds: number, now: Instant): Promise<void>;
  /** Where the counters live right now, for readiness: `degraded` is Redis unreachable, memory in use. */
  state?(): RateLimiterState;
}

export type RateLimiterState = 'memory' | 'redis' | 'degraded';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends, epoch seconds. */
  resetAt: number;
}
