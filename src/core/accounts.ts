/** Accounts: username and password rules, creation, status (INTERFACE section 4). */
import { InputError } from './errors.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, hashPassword } from './passwords.js';
import { USER_STATUSES, type Stores, type User, type UserStatus } from './ports.js';
import { checkedText } from './text.js';
import type { Clock } from './time.js';

export const USERNAME_RULE = '3 to 30 letters, digits, "_" or "-", starting and ending with a letter or digit';
const USERNAME_SHAPE = /^[A-Za-z0-9][A-Za-z0-9_-]{1,28}[A-Za-z0-9]$/;

export function checkUsername(username: string): void {
  if (!USERNAME_SHAPE.test(username)) throw new InputError('username', `username must be ${USERNAME_RULE}`);
}

/**
 * Whether `value` could name an account at all. Every account was created with a username of
 * USERNAME_SHAPE, so a value of another shape names none and is never sent to the database
 * (PostgreSQL text cannot even hold a NUL from an address like `/u/%00`).
 */
export function canBeUsername(value: string): boolean {
  return USERNAME_SHAPE.test(value);
}

/** The account `username` names (in any letter case), or `undefined`. */
export async function findAccount(stores: Stores, username: string): Promise<User | undefined> {
  return canBeUsername(username) ? stores.users.findByUsername(username) : undefined;
}

/**
 * Names no one may sign up with: they would pass for the site or its staff (an attacker as
 * "support" asking for a password). Compared without case, `_` or `-`, so "Ad-min" is refused
 * too. The operator can still create them from the command line.
 */
const RESERVED_USERNAMES = new Set([
  'abuse', 'account', 'accounts', 'admin', 'administrator', 'api', 'apps', 'auth', 'billing', 'community', 'docs',
  'help', 'hostmaster', 'info', 'login', 'logout', 'mail', 'moderator', 'noreply', 'oauth', 'official', 'openid',
  'owner', 'postmaster', 'privacy', 'root', 'security', 'settings', 'signin', 'signup', 'staff', 'support', 'svc',
  'system', 'team', 'webmaster', 'www',
]);

export function isReservedUsername(username: string): boolean {
  return RESERVED_USERNAMES.has(username.toLowerCase().replace(/[_-]/g, ''));
}

/**
 * A password of 8 to 256 characters that is not the username and not made only of spaces or
 * control characters (NIST SP 800-63B 5.1.1.2: refuse what is trivially guessed).
 */
export function checkPassword(password: string, username: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw new InputError('password', `password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  if (/^[\s\p{C}]*$/u.test(password)) throw new InputError('password', 'password must not be only spaces or control characters');
  if (password.trim().toLowerCase() === username.trim().toLowerCase()) throw new InputError('password', 'password must not be your username');
}

export const BIO_MAX_LENGTH = 160;

export interface NewAccount {
  username: string;
  password: string;
  bio?: string;
  member?: boolean;
  level?: number;
  xp?: number;
}

/** Creates an active account; throws `InputError` or `ConflictError` (username taken). */
export async function createAccount(stores: Stores, clock: Clock, account: NewAccount): Promise<User> {
  checkUsername(account.username);
  checkPassword(account.password, account.username);
  const bio = checkedText('bio', account.bio ?? '', { kind: 'line', max: BIO_MAX_LENGTH, min: 0 });
  for (const field of ['level', 'xp'] as const) {
    const value = account[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `${field} must be a whole number of 0 or more`);
    }
  }
  return stores.users.create({
    username: account.username,
    passwordHash: await hashPassword(account.password),
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
 * Changes an account's status. Leaving `active` revokes every grant, personal token and sign-in
 * session of the account for good: making it active again revives none (INTERFACE section 4).
 */
export async function setAccountStatus(stores: Stores, clock: Clock, userId: number, status: UserStatus): Promise<User | undefined> {
  return stores.transaction(async (tx) => {
    const now = clock.now();
    const user = await tx.users.setStatus(userId, status, now);
    if (user && status !== 'active') {
      await tx.grants.revokeForUser(userId, 'account_unusable', now);
      await tx.sessions.endForUser(userId, now);
      await tx.personalTokens.revokeForUser(userId, now);
    }
    return user;
  });
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
