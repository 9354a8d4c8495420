/**
 * A member's copy of their data (GDPR Art. 15, the right of access, and Art. 20, portability, in
 * a structured, machine-readable file): asked with the password, or a code in its place, exactly
 * as deleting the account is (`confirmOwner`, counted as a sign-in), since a browser left signed in
 * must not hand over the whole account at once. Everything a person gave or did here, with no
 * secret and no hash of one: a token, a password, an authenticator app's secret, a recovery code or
 * a passkey's public key would let whoever reads the file sign in, or test guesses offline, and
 * none of it is the member's to read back (docs/site.md, "Downloading your data"). Times are UTC,
 * ISO 8601 with `Z`.
 */
import { BoundedQueue, QueueFullError } from '../bounded-queue.js';
import { OAuthError } from '../errors.js';
import { listAuthorizedApplications } from '../oauth/applications.js';
import { type SiteNames, labelName } from '../site-name.js';
import { scopeList } from '../oauth/scopes.js';
import type { Stores } from '../stores.js';
import { type Instant, formatUtc } from '../time.js';
import { type OwnerProof, type OwnerProofRefusal, confirmOwner } from './owner-proof.js';
import type { User } from './ports.js';
import type { SecurityLog } from './security-log.js';
import type { AttemptOrigin } from './sign-in.js';
import { type TwoStepDeps, secondFactorsOf } from './two-step.js';
import { describeUserAgent } from './user-agent.js';

/** The security log is read in pages of this many lines (it keeps 90 days). */
const LOG_PAGE = 500;

/**
 * Files built at once by this process, and waiting to be: each is read and written whole in
 * memory, the size of everything the member wrote (posts have no count limit, 20,000 characters
 * each), so a few members with much, or one asking again and again, must not hold it all at once.
 */
export const DATA_DOWNLOADS_AT_ONCE = 1;
export const DATA_DOWNLOADS_WAITING = 4;
/** The line of files to build (exported for tests, which hold its turns); a member holds one place in it. */
export const dataDownloadQueue = new BoundedQueue(DATA_DOWNLOADS_AT_ONCE, DATA_DOWNLOADS_WAITING, 1);
export const DATA_DOWNLOADS_BUSY_RETRY_AFTER_SECONDS = 10;

/** The refusal when the line is full: 503 `temporarily_unavailable` with `Retry-After`; nothing was read. */
export class DataDownloadsBusyError extends OAuthError {
  constructor() {
    super('temporarily_unavailable', 'Too many copies of data are being made right now; try again in a moment.', {
      headers: { 'retry-after': String(DATA_DOWNLOADS_BUSY_RETRY_AFTER_SECONDS) },
      words: { key: 'settings.dataBusy' },
    });
  }
}

/** `text`: the file, JSON; `exportedAt`: when it was read, as in it. */
export type DataDownload = { ok: true; text: string; exportedAt: string } | OwnerProofRefusal;

/** Throws `DataDownloadsBusyError` once the owner is confirmed, when the line of files to build is full. */
export async function downloadAccountData(
  deps: TwoStepDeps & { securityLog: SecurityLog }, user: User, proof: OwnerProof, origin: AttemptOrigin,
): Promise<DataDownload> {
  const confirmed = await confirmOwner(deps, user, proof, origin, 'enter your password to download your data');
  if (!confirmed.ok) return confirmed;
  const file = await dataDownloadQueue.run(async () => {
    const data = await accountData(deps.stores, user, deps.clock.now());
    return { text: `${JSON.stringify(data, null, 2)}\n`, exportedAt: data.exportedAt };
  }, { asker: String(user.id) }).catch((error: unknown) => {
    throw error instanceof QueueFullError ? new DataDownloadsBusyError() : error;
  });
  await deps.securityLog.record({ userId: user.id, kind: 'account.data_downloaded', origin });
  return { ok: true, ...file };
}

const utc = (instant: Instant | null) => (instant === null ? null : formatUtc(instant));

export type AccountData = Awaited<ReturnType<typeof accountData>>;

/** What the file holds, read for `user` at `now`. */
export async function accountData(stores: Stores, user: User, now: Instant) {
  const [email, factors, passkeys, apps, tokens, owned, sessions, log, posts, comments, likes] = await Promise.all([
    stores.memberEmails.find(user.id),
    secondFactorsOf(stores, user.id),
    stores.passkeys.listForUser(user.id),
    listAuthorizedApplications(stores, user.id),
    stores.personalTokens.listForUser(user.id),
    stores.clients.listByOwner(user.id),
    stores.sessions.listForUser(user.id, now),
    wholeSecurityLog(stores, user.id),
    stores.posts.listAllByAuthor(user.id),
    stores.posts.listCommentsByAuthor(user.id),
    stores.posts.listLikesBy(user.id),
  ]);
  return {
    exportedAt: formatUtc(now),
    profile: {
      id: user.id, username: user.username, nickname: user.nickname, bio: user.bio, language: user.language, timeZone: user.timeZone,
      createdAt: formatUtc(user.createdAt), status: user.status, member: user.member, level: user.level, xp: user.xp,
    },
    // The one address, and a change to another waiting for its link.
    email: email === undefined ? null : { address: email.address, verified: email.verifiedAt !== null, verifiedAt: utc(email.verifiedAt), pendingAddress: email.pending },
    // Whether it is on (`requiresSecondStep`: an authenticator app), and how many recovery codes are left, never which.
    twoStepVerification: { on: factors.totp, recoveryCodesLeft: factors.recoveryCodesLeft },
    passkeys: passkeys.map((p) => ({ name: p.name, createdAt: formatUtc(p.createdAt), lastUsedAt: utc(p.lastUsedAt) })),
    authorizedApplications: apps.map((a) => ({
      name: a.client.name, clientId: a.client.clientId, scopes: a.scopes, authorizedAt: formatUtc(a.firstAuthorizedAt), lastUsedAt: utc(a.lastUsedAt),
    })),
    personalTokens: tokens.map((t) => ({
      name: t.name, scopes: scopeList(t.scope), createdAt: formatUtc(t.createdAt), lastUsedAt: utc(t.lastUsedAt), expiresAt: utc(t.expiresAt), revokedAt: utc(t.revokedAt),
    })),
    registeredApplications: owned.map((c) => ({
      name: c.name, clientId: c.clientId, type: c.type, status: c.status, description: c.description, homepage: c.homepageUrl,
      redirectUris: c.redirectUris, createdAt: formatUtc(c.createdAt),
    })),
    sessions: sessions.map((s) => ({
      browser: describeUserAgent(s.userAgent), address: s.address, signedInAt: formatUtc(s.createdAt), lastSeenAt: formatUtc(s.lastSeenAt), expiresAt: formatUtc(s.expiresAt),
    })),
    securityLog: log.map((e) => ({ kind: e.kind, at: formatUtc(e.createdAt), address: e.address, browser: e.device, detail: e.detail })),
    posts: posts.map((p) => ({
      id: p.id, title: p.title, category: p.categoryName, status: p.status, body: p.body, createdAt: formatUtc(p.createdAt), updatedAt: formatUtc(p.updatedAt),
    })),
    comments: comments.map((c) => ({ id: c.id, postId: c.postId, body: c.body, createdAt: formatUtc(c.createdAt) })),
    likes: likes.map((l) => ({ postId: l.postId, createdAt: formatUtc(l.createdAt) })),
  };
}

/**
 * `<site>-data-<username>-<date>.json`: the site's name as a label names it (`labelName`), in
 * lower-case ASCII letters, digits and dashes, so that the header needs no encoding and every
 * system takes the name; its host's when no letter of it is ASCII. The username is ASCII already
 * (`USERNAME_SHAPE`); the date is the download's, UTC.
 */
export function dataFileName(names: SiteNames, baseUrl: string, user: Pick<User, 'username'>, exportedAt: string): string {
  const slug = (text: string) => text.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const site = slug(labelName(names)) || slug(new URL(baseUrl).hostname);
  return `${site}-data-${user.username}-${exportedAt.slice(0, 10)}.json`;
}

/** Every line of the member's security log, newest first. */
async function wholeSecurityLog(stores: Stores, userId: number) {
  const lines = [];
  for (let offset = 0; ; offset += LOG_PAGE) {
    const page = await stores.securityEvents.listForUser(userId, offset, LOG_PAGE);
    lines.push(...page.items);
    if (page.items.length < LOG_PAGE) return lines;
  }
}
