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
import { AccountUnusableError, OAuthError } from '../errors.js';
import { listAuthorizedApplications } from '../oauth/applications.js';
import { type SiteNames, labelName } from '../site-name.js';
import { scopeList } from '../oauth/scopes.js';
import type { Stores } from '../stores.js';
import { type Clock, type Instant, formatUtc } from '../time.js';
import { type OwnerProof, type OwnerProofRefusal, confirmOwner } from './owner-proof.js';
import type { KeysetCursor } from '../community/ports.js';
import { requireActiveAccount } from './accounts.js';
import { liveSignIn } from './sessions.js';
import type { SecurityEvent, User } from './ports.js';
import type { SecurityLog } from './security-log.js';
import type { AttemptOrigin } from './sign-in.js';
import { type TwoStepDeps, secondFactorsOf } from './two-step.js';
import { describeUserAgent } from './user-agent.js';

/** The security log is read in pages of this many lines (it keeps 90 days). */
const LOG_PAGE = 500;

/**
 * Posts, comments and likes are read and written this many at a time: a page of posts is at
 * most 200 × 20,000 characters, a few MB as JSON, whatever the member wrote in all.
 */
export const DATA_PAGE = 200;

/**
 * Files written at once by this process, and waiting to be. Each is read a page at a time as its
 * reader takes it, so its memory is a page's, but it holds a database connection (PostgreSQL) or
 * a picture of the file that keeps the WAL from shrinking (SQLite) for as long as it lasts, and
 * reads every row the member has: one at a time, with a short line, so that a few members with
 * much, or one asking again and again, cannot hold those.
 */
export const DATA_DOWNLOADS_AT_ONCE = 1;
export const DATA_DOWNLOADS_WAITING = 4;
/** The line of files to write (exported for tests, which hold its turns); a member holds one place in it. */
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

/**
 * Where the file goes as it is read (the HTTP reply). `proven` is called once the owner is
 * confirmed, with the device cookie a right password renewed (`confirmOwner`). `begin` is called
 * once, before the first piece, with the file's time and the download's audit line to write (its
 * security-log line is committed). `write` resolves once the reader can take more, and rejects
 * when the reader went away or took nothing for too long: the download then ends there, its turn
 * given back.
 */
export interface DataFileSink {
  proven(deviceCookie: string | undefined): void;
  begin(exportedAt: string, announce: () => Promise<void>): Promise<void>;
  write(piece: string): Promise<void>;
}

/**
 * How long a reader may take nothing of the file before it is broken off: one that stops reading
 * (or reads slower than a post in this time) must not hold the download's turn, a database
 * connection or picture, and a page in memory for ever.
 */
export const DATA_READER_PATIENCE_MS = 30_000;

/**
 * How fast, on average since its file began, a reader must take it, in bytes a second
 * (16 KiB/s, a slow mobile link's; bytes, as the link carries them, not characters, which are
 * three bytes each in Chinese): past `DATA_READER_PATIENCE_MS` plus the time the file
 * written so far takes at this rate, it is broken off. The patience alone bounds one stall, not
 * the whole: a reader that took a little before each 30 s ran out held the one turn, a
 * PostgreSQL connection and the oldest snapshot (VACUUM and SQLite's checkpoints stop there) for
 * as long as it liked; now for as long as the file takes at this rate.
 */
export const DATA_READER_MIN_RATE = 16_384;

export type DataDownload = { ok: true } | OwnerProofRefusal;

/**
 * Writes the member's file to `sink`, in its turn of `dataDownloadQueue`, held until the file
 * ends or the sink refuses a piece. Throws `DataDownloadsBusyError` once the owner is confirmed,
 * when the line is full, and `AccountUnusableError` when the account is no longer active; either
 * before `begin`. A read that fails after `begin` throws too, and so does a file whose session
 * (`sessionIdHash`, the one that asked) ends or whose account stops being active while it is
 * read: the caller must then break the file off, never end it as if whole.
 */
export async function downloadAccountData(
  deps: TwoStepDeps & { securityLog: SecurityLog }, user: User, proof: OwnerProof, origin: AttemptOrigin, sink: DataFileSink, sessionIdHash: string,
): Promise<DataDownload> {
  const confirmed = await confirmOwner(deps, user, proof, origin, 'enter your password to download your data');
  if (!confirmed.ok) return confirmed;
  sink.proven(confirmed.deviceCookie);
  await dataDownloadQueue.run(async () => {
    // The line is written first, holding the account while it is active (`requireActiveAccount`),
    // and committed before anything is read: a deletion racing the download waits for it and then
    // erases it with the rest of the log, or went first and nothing is written. A line that
    // cannot be written gives no file, as a sign-in whose line cannot be written signs no one in:
    // a copy of the whole account is never taken unseen by its owner.
    const announce = await deps.stores.transaction(async (tx) => {
      await requireActiveAccount(tx, user.id, 'download its data');
      return deps.securityLog.recordAll([{ userId: user.id, kind: 'account.data_downloaded', origin }], tx.securityEvents);
    });
    await deps.stores.readSnapshot(async (picture) => {
      // A deletion committed between the line and the picture erased the line and the data the
      // file would tell: no file then. One committed after it leaves the picture whole.
      const account = await picture.users.findById(user.id);
      if (account?.status !== 'active') throw new AccountUnusableError(`account "${user.username}" is no longer active; its data is not downloaded`);
      let unchecked = 0;
      const stillSignedIn = async () => {
        unchecked = 0;
        await requireStillSignedIn(deps, user, sessionIdHash);
      };
      // Its turn may have come minutes after the request was let in: a session signed out
      // meanwhile gets no file at all, not the head (addresses, apps, tokens) before the first page.
      await stillSignedIn();
      const now = deps.clock.now();
      await sink.begin(formatUtc(now), announce);
      await writeAccountData(picture, account, now, async (piece) => {
        if (unchecked >= SIGN_IN_CHECKED_EVERY_BYTES) await stillSignedIn();
        unchecked += Buffer.byteLength(piece);
        await sink.write(piece);
      }, stillSignedIn);
    });
  }, { asker: String(user.id) }).catch((error: unknown) => {
    throw error instanceof QueueFullError ? new DataDownloadsBusyError() : error;
  });
  return { ok: true };
}

/**
 * Bytes of the file written between two checks that its session is still signed in, besides the
 * check before each page and before the file's end: a page of long posts is megabytes, which a
 * slow reader takes for minutes (256 KiB is 16 s at `DATA_READER_MIN_RATE`).
 */
const SIGN_IN_CHECKED_EVERY_BYTES = 256 * 1024;

/**
 * Throws `AccountUnusableError` once the session that asked for the file is no longer signed in,
 * or its account no longer active, as the site sees them now (`liveSignIn`, the rule every page
 * reads its sign-in by), not as the picture does. A member
 * taking their account back signs the other browsers out or changes the password, staff suspend
 * an account taken over, the member deletes it from another tab: each ends the session
 * (INTERFACE section 4), and so ends its download too, within a page or 256 KiB, rather than up
 * to half an hour later at a slow reader's pace.
 */
async function requireStillSignedIn(deps: { stores: Stores; clock: Clock }, user: User, sessionIdHash: string): Promise<void> {
  const live = await liveSignIn(deps.stores.sessions, sessionIdHash, deps.clock.now());
  if (live?.user.id !== user.id) throw new AccountUnusableError(`account "${user.username}": the download's session ended or the account is no longer active; the download is broken off`);
}

const utc = (instant: Instant | null) => (instant === null ? null : formatUtc(instant));

/** `value` as `JSON.stringify(value, null, 2)` writes it `depth` levels in. */
const nested = (value: unknown, depth: number) => JSON.stringify(value, null, 2).replaceAll('\n', `\n${'  '.repeat(depth)}`);

/**
 * The file, read for `user` at `now`, written to `write` a piece at a time, exactly as
 * `JSON.stringify(data, null, 2)` would write it whole: the short parts at once, then each long
 * list a page at a time, so that no more than a page of it is held. `stillSignedIn` is asked before
 * each page of a list and before the end: it throws once the file may no longer be read.
 */
async function writeAccountData(
  stores: Stores, user: User, now: Instant, write: (piece: string) => Promise<void>, stillSignedIn: () => Promise<void>,
): Promise<void> {
  const [email, factors, passkeys, apps, tokens, owned, sessions] = await Promise.all([
    stores.memberEmails.find(user.id),
    secondFactorsOf(stores, user.id),
    stores.passkeys.listForUser(user.id),
    listAuthorizedApplications(stores, user.id),
    stores.personalTokens.listForUser(user.id),
    stores.clients.listByOwner(user.id),
    stores.sessions.listForUser(user.id, now),
  ]);
  const head = {
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
  };
  await write(`{\n${Object.entries(head).map(([key, value]) => `  ${JSON.stringify(key)}: ${nested(value, 1)}`).join(',\n')}`);
  const lists: Array<[string, AsyncIterable<unknown[]>]> = [
    ['securityLog', mapPages(securityLogPages(stores, user.id), (e) => ({ kind: e.kind, at: formatUtc(e.createdAt), address: e.address, browser: e.device, detail: e.detail }))],
    ['posts', mapPages(keysetPages((after) => stores.posts.listAllByAuthor(user.id, after, DATA_PAGE), (p) => p), (p) => ({
      id: p.id, title: p.title, category: p.categoryName, status: p.status, body: p.body, createdAt: formatUtc(p.createdAt), updatedAt: formatUtc(p.updatedAt),
    }))],
    ['comments', mapPages(keysetPages((after) => stores.posts.listCommentsByAuthor(user.id, after, DATA_PAGE), (c) => c), (c) => ({
      id: c.id, postId: c.postId, body: c.body, createdAt: formatUtc(c.createdAt),
    }))],
    ['likes', mapPages(keysetPages((after) => stores.posts.listLikesBy(user.id, after, DATA_PAGE), (l) => ({ createdAt: l.createdAt, id: l.postId })), (l) => ({
      postId: l.postId, createdAt: formatUtc(l.createdAt),
    }))],
  ];
  for (const [key, pages] of lists) {
    await write(`,\n  ${JSON.stringify(key)}: [`);
    let empty = true;
    // An item a piece: each waits for the reader to take the one before (`DataFileSink.write`).
    for await (const page of pages) {
      await stillSignedIn();
      for (const item of page) {
        await write(`${empty ? '' : ','}\n    ${nested(item, 2)}`);
        empty = false;
      }
    }
    await write(empty ? ']' : '\n  ]');
  }
  // The end makes the file whole: not once the session ended, however little was left.
  await stillSignedIn();
  await write('\n}\n');
}

/** Every row `read` gives, `DATA_PAGE` at a time, each page the rows after the last of the one before (`cursorOf`). */
async function* keysetPages<T>(read: (after: KeysetCursor | undefined) => Promise<T[]>, cursorOf: (row: T) => KeysetCursor): AsyncGenerator<T[]> {
  let after: KeysetCursor | undefined;
  for (;;) {
    const page = await read(after);
    if (page.length > 0) yield page;
    if (page.length < DATA_PAGE) return;
    after = cursorOf(page.at(-1)!);
  }
}

/** Every line of the member's security log, newest first, `LOG_PAGE` at a time. */
async function* securityLogPages(stores: Stores, userId: number): AsyncGenerator<SecurityEvent[]> {
  for (let offset = 0; ; offset += LOG_PAGE) {
    const page = await stores.securityEvents.listForUser(userId, offset, LOG_PAGE);
    if (page.items.length > 0) yield page.items;
    if (page.items.length < LOG_PAGE) return;
  }
}

/** Each page of `pages` in the file's shape. */
async function* mapPages<T, U>(pages: AsyncIterable<T[]>, shape: (row: T) => U): AsyncGenerator<U[]> {
  for await (const page of pages) yield page.map(shape);
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
