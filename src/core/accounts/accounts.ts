/** Accounts: username and password rules, creation, status (INTERFACE section 4). */
import { AccountUnusableError, InputError, checkAll } from '../errors.js';
import { LOCALES, type Locale, isLocale } from '../locales.js';
import { canonicalTimeZone, isTimeZone } from '../site-time.js';
import { isCommonPassword } from './common-passwords.js';
import { checkNickname } from './nicknames.js';
import { queueBackchannelLogouts } from '../oidc/logout/events.js';
import { type HashAsker, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, hashPassword } from './passwords.js';
import type { Stores } from '../stores.js';
import { type ProfileChanges, USER_STATUSES, type User, type UserStatus } from './ports.js';
import { checkedText, hasVisibleCharacter } from '../text.js';
import { type Clock, type Instant, hasExpired } from '../time.js';

/** The shortest and the longest username USERNAME_SHAPE takes, in characters as read (after NFKC); the pages' hints and problems say them. */
export const USERNAME_MIN_LENGTH = 3;
export const USERNAME_MAX_LENGTH = 30;
export const USERNAME_RULE = `${USERNAME_MIN_LENGTH} to ${USERNAME_MAX_LENGTH} letters, digits, "_" or "-", starting and ending with a letter or digit`;
/** The bounds as the catalogs' `usernameHint` and `usernameShape` take them. */
export const USERNAME_BOUNDS = { min: USERNAME_MIN_LENGTH, max: USERNAME_MAX_LENGTH } as const;
/** A letter or digit at each end, and between them the rest of USERNAME_MIN_LENGTH to USERNAME_MAX_LENGTH. */
const USERNAME_SHAPE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]{${USERNAME_MIN_LENGTH - 2},${USERNAME_MAX_LENGTH - 2}}[A-Za-z0-9]$`);

/**
 * The longest typed username, trimmed, that NFKC could read as one of USERNAME_SHAPE: NFKC
 * (Unicode UAX #15) deletes no character (no decomposition mapping in the UCD is empty) and its
 * composition only makes characters outside ASCII, so each ASCII character of a username comes
 * from at least one whole code point of what was typed, at most 2 UTF-16 units (𝐀 U+1D400 reads
 * as A). Longer is refused before NFKC reads it: a posted body can hold 64 KB. The sign-up and
 * sign-in pages' username fields take as many (`maxlength` counts UTF-16 units too).
 */
export const TYPED_USERNAME_MAX_LENGTH = 2 * USERNAME_MAX_LENGTH;

/**
 * What a typed username reads as: trimmed, after NFKC (Unicode UAX #15), so one typed in
 * full-width letters (a Chinese input method in full-width mode) is the ASCII username it reads
 * as. `undefined` when it is too long to read as any username (`TYPED_USERNAME_MAX_LENGTH`).
 */
export function readTypedUsername(typed: string): string | undefined {
  const trimmed = typed.trim();
  return trimmed.length > TYPED_USERNAME_MAX_LENGTH ? undefined : trimmed.normalize('NFKC').trim();
}

/**
 * Whether a typed sign-in name is an e-mail address, which signs no one in: the username is the
 * sign-in handle (INTERFACE section 12) and none holds "@" (USERNAME_SHAPE), nor what NFKC reads
 * as one (`readTypedUsername`): the full-width "＠" of a Chinese input method, the small "﹫".
 */
export function typedEmailAddress(typed: string): boolean {
  return /[@\uFE6B\uFF20]/.test(typed);
}

/**
 * The username `typed` reads as (`readTypedUsername`), if it has USERNAME_SHAPE, as sign-in reads
 * it (`accountKey`).
 */
export function checkUsername(typed: string): string {
  const username = readTypedUsername(typed);
  if (username === undefined || !USERNAME_SHAPE.test(username)) throw InputError.worded('username', `username must be ${USERNAME_RULE}`, { key: 'problems.usernameShape', values: USERNAME_BOUNDS });
  return username;
}

/**
 * Whether `value` could name an account at all. Every account was created with a username of
 * USERNAME_SHAPE, so a value of another shape names none and is never sent to the database
 * (PostgreSQL text cannot even hold a NUL from an address like `/u/%00`).
 */
export function canBeUsername(value: string): boolean {
  return USERNAME_SHAPE.test(value);
}

/**
 * The account `username` names (in any letter case), or `undefined`: a name as written, such as
 * an address's `/u/:name`, which NFKC does not read (a typed one: `findTypedAccount`).
 */
export async function findAccount(stores: Stores, username: string): Promise<User | undefined> {
  return canBeUsername(username) ? stores.users.findByUsername(username) : undefined;
}

/** The account a username as a person typed it names (`readTypedUsername`: full-width letters too), or `undefined`. */
export async function findTypedAccount(stores: Stores, typed: string): Promise<User | undefined> {
  const username = readTypedUsername(typed);
  return username === undefined ? undefined : findAccount(stores, username);
}

/**
 * Names no one may sign up with: they would pass for the site or its staff (an attacker as
 * "support" asking for a password).
 */
const RESERVED_USERNAMES = new Set([
  'abuse', 'account', 'accounts', 'admin', 'administrator', 'api', 'apps', 'auth', 'billing', 'community', 'docs',
  'help', 'hostmaster', 'info', 'login', 'logout', 'mail', 'moderator', 'noreply', 'oauth', 'official', 'openid',
  'owner', 'postmaster', 'privacy', 'root', 'security', 'settings', 'signin', 'signup', 'staff', 'support', 'svc',
  'superuser', 'sysadmin', 'system', 'team', 'webmaster', 'www',
]);
/** Words that make a reserved name no less official around it ("support-team", "the-admins"). */
const RESERVED_AFFIXES = ['s', 'the', 'sys', 'super', 'user', 'desk', 'bot', 'service', 'mod', 'ops'];
/** Digits written for the letters they look like: "adm1n", "r00t", "4dmin". */
const LOOK_ALIKE: Record<string, string[]> = { 0: ['o'], 1: ['i', 'l'], 3: ['e'], 4: ['a'], 5: ['s'], 7: ['t'] };

/** The spellings a name could be read as: lower-cased, without `_` or `-`, with or without trailing digits, look-alike digits as letters. */
function readings(username: string): string[] {
  const bare = username.toLowerCase().replace(/[_-]/g, '');
  let forms = [bare, bare.replace(/\d+$/, '')];
  for (const [digit, letters] of Object.entries(LOOK_ALIKE)) {
    if (forms.some((f) => f.includes(digit))) forms = forms.flatMap((f) => letters.map((l) => f.replaceAll(digit, l)));
  }
  return forms;
}

/** Whether `form` is made wholly of reserved names and affixes, at least one a reserved name. */
function isMadeOfReservedWords(form: string): boolean {
  const words = [...RESERVED_USERNAMES, ...RESERVED_AFFIXES];
  // reachable[i]: form.slice(0, i) splits into words; the value says whether a reserved name was among them.
  const reachable: Array<boolean | undefined> = [false];
  for (let i = 0; i < form.length; i++) {
    const before = reachable[i];
    if (before === undefined) continue;
    for (const word of words) {
      if (!form.startsWith(word, i)) continue;
      const end = i + word.length;
      reachable[end] = (reachable[end] ?? false) || before || RESERVED_USERNAMES.has(word);
    }
  }
  return reachable[form.length] === true;
}

/**
 * Whether sign-up refuses `username` as one that would pass for the site or its staff: a
 * reserved name in any reading of it ("Ad-min", "adm1n", "admin2"), alone or with other
 * reserved names and affixes ("support-team", "official-support", "sysadmins"). The operator can
 * still create such names from the command line.
 */
export function isReservedUsername(username: string): boolean {
  return readings(username).some(isMadeOfReservedWords);
}

/**
 * A password a person chooses (sign-up, a change, a reset): `checkPassword`, and not one of the
 * most common passwords (NIST SP 800-63B 5.1.1.2: compare against values known to be used).
 */
export function checkNewPassword(password: string, username: string): void {
  checkPassword(password, username);
  if (isCommonPassword(password)) {
    throw InputError.worded('password', 'password is one of the most common passwords; choose one that is harder to guess', { key: 'problems.passwordCommon' });
  }
}

/**
 * A password of 8 to 256 characters that is not the username and holds something besides
 * spaces, control and invisible characters (NIST SP 800-63B 5.1.1.2: refuse what is trivially
 * guessed).
 */
export function checkPassword(password: string, username: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw InputError.worded('password', `password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
      { key: 'problems.passwordLength', values: { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH } });
  }
  if (!hasVisibleCharacter(password)) throw InputError.worded('password', 'password must not be only spaces, control or invisible characters', { key: 'problems.passwordInvisible' });
  if (password.trim().toLowerCase() === username.trim().toLowerCase()) throw InputError.worded('password', 'password must not be your username', { key: 'problems.passwordIsUsername' });
}

export const BIO_MAX_LENGTH = 160;

export interface NewAccount {
  username: string;
  password: string;
  /** The name the site shows (INTERFACE section 12); absent or empty: the username. */
  nickname?: string;
  bio?: string;
  member?: boolean;
  level?: number;
  xp?: number;
}

/**
 * Creates an active account; throws `InputError` or `ConflictError` (username taken).
 * `askedBy` is who signs up, for its share of the password hash queue.
 */
export async function createAccount(stores: Stores, clock: Clock, account: NewAccount, askedBy?: HashAsker): Promise<User> {
  const username = checkUsername(account.username);
  checkPassword(account.password, username);
  const nickname = checkNickname(account.nickname ?? '');
  const bio = checkedText('bio', account.bio ?? '', { kind: 'line', max: BIO_MAX_LENGTH, min: 0 });
  for (const field of ['level', 'xp'] as const) {
    const value = account[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `${field} must be a whole number of 0 or more`);
    }
  }
  return stores.users.create({
    username,
    nickname,
    passwordHash: await hashPassword(account.password, askedBy),
    bio,
    member: account.member ?? false,
    level: account.level ?? 1,
    xp: account.xp ?? 0,
  }, clock.now());
}

export function isUserStatus(value: string): value is UserStatus {
  return (USER_STATUSES as readonly string[]).includes(value);
}

/**
 * Holds the account `userId` names while it is active (`holdActive`), for the caller's
 * transaction, which then writes what is made for it; else `AccountUnusableError`, whose message
 * says the account can no longer `what` ("have a personal token"). INTERFACE section 4: an account
 * that is not active had everything acting for it revoked for good, so nothing new is made for it
 * either. Held, not only read: a member's own deletion committed between a read and the write
 * would have erased or deactivated everything but what the write then made (an active app of a
 * deleted owner); it waits for the hold instead, or the hold sees it.
 */
export async function requireActiveAccount(stores: Stores, userId: number, what: string): Promise<void> {
  if (await stores.users.holdActive(userId)) return;
  const user = await stores.users.findById(userId);
  if (!user) throw new AccountUnusableError(`no account has id ${userId}, so none can ${what}`);
  throw new AccountUnusableError(`account "${user.username}" is ${user.status}; only an active account can ${what}`);
}

/**
 * Why a credential of an account that is not active (a token, a code's grant) no longer works, as
 * its holder is told: `not_active` when it was in force as the account left `active`, which ended
 * it then (`statusChangedAt`), so an app learns that authorizing again will not help
 * (`ACCOUNT_NOT_ACTIVE`); `revoked` or `expired` when it had ended before, so an old credential
 * (of an app the member withdrew, a leaked personal token) is no way to watch a status the site
 * tells no one else.
 */
export function whyEnded(user: Pick<User, 'statusChangedAt'>, credential: { revokedAt: Instant | null; expiresAt: Instant | null }): 'not_active' | 'revoked' | 'expired' {
  const leftActive = user.statusChangedAt;
  if (credential.revokedAt !== null && credential.revokedAt < leftActive) return 'revoked';
  return hasExpired(credential.expiresAt, leftActive) ? 'expired' : 'not_active';
}

/**
 * Changes an account's status. Leaving `active` revokes every grant, personal token, remembered
 * consent and sign-in session of the account for good: making it active again revives none
 * (INTERFACE section 4). Coming back to `active` ends whatever is live once more: nothing is made
 * for an account that is not active (`requireActiveAccount`), but a sign-in or a token begun just
 * before the account left `active` can land just after its revocation, and must not come alive
 * with the account. Every app whose grant that revoked is sent a back-channel logout of all the
 * user's sessions (INTERFACE section 5), queued in the same transaction.
 */
export async function setAccountStatus(stores: Stores, clock: Clock, userId: number, status: UserStatus): Promise<User | undefined> {
  return stores.transaction(async (tx) => {
    const now = clock.now();
    const before = await tx.users.findById(userId);
    if (!before) return undefined;
    const user = await tx.users.setStatus(userId, status, now);
    if (user && (status !== 'active' || before.status !== 'active')) await revokeAccountCredentials(tx, now, userId);
    return user;
  });
}

/**
 * What leaving `active` ends, inside the caller's transaction (INTERFACE sections 4 and 5): every
 * grant (so every code, access and refresh token) with a back-channel logout to each app it
 * revoked, every sign-in session, every personal token, every remembered consent, and a change of
 * e-mail address waiting for its link with every verification link (docs/site.md, "E-mail and the
 * way back in": a suspension too, which may be staff stopping a takeover whose change it is).
 */
export async function revokeAccountCredentials(tx: Stores, now: Instant, userId: number): Promise<void> {
  const clients = await tx.grants.revokeForUser(userId, 'account_unusable', now);
  await queueBackchannelLogouts(tx, now, clients.map((clientId) => ({ clientId, userId, sid: null, cause: 'account_unusable' as const })));
  await tx.sessions.endForUser(userId, now);
  await tx.personalTokens.revokeForUser(userId, now);
  // Consent is an authorization too: an account made active again is asked anew.
  await tx.consents.removeForUser(userId);
  // A link still in a mailbox would verify an address for an account no one may use, and a
  // pending change would swap it in when opened.
  await tx.memberEmails.cancelPending(userId, now);
  await tx.memberEmails.endLinks(userId, 'verify_email', now);
}

/** What the profile form sends (`/settings/profile`); an absent field stays as it is. */
export interface ProfileForm {
  bio?: string | undefined;
  nickname?: string | undefined;
  language?: string | undefined;
  timeZone?: string | undefined;
}

/**
 * Checks every field given (`InputError` naming each at fault) and saves them in one write:
 * the bio (seed 2.2: one line, at most BIO_MAX_LENGTH characters, empty clears it), the
 * nickname (`checkNickname`, empty: the username), the language and the time zone (INTERFACE
 * section 12; empty: the browser's language, the site's zone). Returns what was saved.
 */
export async function updateProfile(stores: Stores, clock: Clock, userId: number, form: ProfileForm): Promise<ProfileChanges> {
  const [bio, nickname, language, timeZone] = checkAll(
    () => form.bio === undefined ? undefined : checkedText('bio', form.bio, { kind: 'line', max: BIO_MAX_LENGTH, min: 0 }),
    () => form.nickname === undefined ? undefined : checkNickname(form.nickname),
    () => form.language === undefined ? undefined : checkLanguage(form.language),
    () => form.timeZone === undefined ? undefined : checkTimeZone(form.timeZone),
  );
  const changes: ProfileChanges = {
    ...(bio !== undefined ? { bio } : {}),
    ...(nickname !== undefined ? { nickname } : {}),
    ...(language !== undefined ? { language } : {}),
    ...(timeZone !== undefined ? { timeZone } : {}),
  };
  // A deletion racing the form has erased the profile: nothing is written after it.
  if (!(await stores.users.updateProfile(userId, changes, clock.now()))) throw new AccountUnusableError(`account ${userId} is not active; only an active account can change its profile`);
  return changes;
}

function checkLanguage(value: string): Locale | null {
  if (value === '') return null;
  if (!isLocale(value)) throw InputError.worded('language', `language must be one of ${LOCALES.join(', ')}`, { key: 'problems.languageUnknown' });
  return value;
}

function checkTimeZone(value: string): string | null {
  if (value === '') return null;
  if (!isTimeZone(value)) throw InputError.worded('time_zone', 'time zone must be an IANA time zone such as Asia/Shanghai', { key: 'problems.timeZoneUnknown' });
  return canonicalTimeZone(value);
}

/**
 * Sets a new password (checked by `checkPassword`) and ends every sign-in session of the account:
 * a session opened with the old password must not outlive it (OWASP ASVS 3.3.3). Grants of apps
 * and personal tokens stay: they were given by the user and do not hold the password. Returns how
 * many sessions ended, or `undefined` when there is no such user.
 */
export async function setPassword(stores: Stores, clock: Clock, user: Pick<User, 'id' | 'username'>, password: string): Promise<{ sessionsEnded: number } | undefined> {
  checkPassword(password, user.username);
  const passwordHash = await hashPassword(password);
  return stores.transaction(async (tx) => {
    const now = clock.now();
    if (!(await tx.users.setPasswordHash(user.id, passwordHash, now))) return undefined;
    return { sessionsEnded: await tx.sessions.endForUser(user.id, now) };
  });
}
