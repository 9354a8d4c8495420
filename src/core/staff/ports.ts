/**
 * The storage the staff console needs (INTERFACE section 14): every account's role, and the staff
 * log, which is only ever appended to.
 */
import type { User } from '../accounts/ports.js';
import type { Client } from '../oauth/ports.js';
import type { Instant } from '../time.js';

export type Role = 'member' | 'moderator' | 'admin';

export const ROLES: readonly Role[] = ['member', 'moderator', 'admin'];

/** What staff did, one name per kind of change. */
export type StaffAction =
  | 'member.status' | 'member.sessions_revoked' | 'member.two_step_reset' | 'member.role' | 'member.token_created'
  | 'app.status' | 'app.verified' | 'app.secret_rotated'
  | 'keys.rotated';

export const STAFF_ACTIONS: readonly StaffAction[] = [
  'member.status', 'member.sessions_revoked', 'member.two_step_reset', 'member.role', 'member.token_created', 'app.status', 'app.verified', 'app.secret_rotated',
  'keys.rotated',
];

/** What an action was on: an account (its id), an app (its client id) or the signing keys. */
export type StaffTargetKind = 'member' | 'app' | 'keys';

export interface StaffLogEntry {
  id: number;
  createdAt: Instant;
  /** The account that acted; `null`: the operator at the command line. */
  actorId: number | null;
  /** The actor's username when it acted, or `cli`. */
  actorName: string;
  action: StaffAction;
  targetKind: StaffTargetKind;
  /** A user id or a client id as text; empty for the keys. */
  targetId: string;
  /** The target's username or app name when it was acted on. */
  targetName: string;
  /** What the action set (`{"status":"suspended"}`); never a secret. */
  detail: Record<string, string>;
  reason: string;
}

export interface RoleStore {
  /** `undefined`: no such account. */
  roleOf(userId: number): Promise<Role | undefined>;
  /** Whether the account exists (and now has `role`). */
  setRole(userId: number, role: Role, now: Instant): Promise<boolean>;
  /**
   * Whether the account is active and has `role`, claimed for the rest of the transaction: the
   * row stays locked until it ends (a write), so no concurrent change of that role can pass it.
   */
  holdsRole(userId: number, role: Role): Promise<boolean>;
}

export interface StaffLogStore {
  /** Appends an entry; nothing updates or deletes one (the table's triggers refuse it too). */
  append(entry: Omit<StaffLogEntry, 'id'>): Promise<StaffLogEntry>;
  /** Up to `limit` entries, newest first, with an id below `beforeId` when given; of one target when given. */
  list(options: { limit: number; beforeId?: number; target?: { kind: StaffTargetKind; id: string } }): Promise<StaffLogEntry[]>;
}

/** Finding members for the console. */
export interface MemberDirectory {
  /**
   * Up to `limit` accounts `query` names, by id: an id (all digits), a username beginning with it,
   * a nickname holding it, or an e-mail address that is it (any letter case).
   */
  search(query: string, limit: number): Promise<User[]>;
  /**
   * How many accounts were created in each range between consecutive `bounds` (ascending): the
   * i-th count is of `bounds[i]` ≤ created_at < `bounds[i + 1]`, so n bounds give n − 1 counts.
   */
  countJoined(bounds: readonly Instant[]): Promise<number[]>;
}

/** The figures the console's overview shows a day at a time (INTERFACE section 14). */
export type Figure = 'sign_ins' | 'new_members' | 'tokens_issued' | 'refusals' | 'throttled';

export const FIGURES: readonly Figure[] = ['sign_ins', 'new_members', 'tokens_issued', 'refusals', 'throttled'];

/** A count of one figure on one day (`YYYY-MM-DD` in the site's time zone). */
export interface DailyCount {
  day: string;
  figure: Figure;
  count: number;
}

export interface DailyFigureStore {
  /** Adds each count to what the day already holds (instances add theirs alike). */
  add(counts: readonly DailyCount[]): Promise<void>;
  /** Every count of the days from `firstDay` on. */
  since(firstDay: string): Promise<DailyCount[]>;
}

/** Finding apps for the console, and how much they are used. */
export interface AppDirectory {
  /** Up to `limit` apps whose client id is `query` or whose name holds it (any letter case), newest first; every app when `query` is empty. */
  search(query: string, limit: number): Promise<Client[]>;
  /** How many accounts hold a live grant for the app, and how many access tokens it was issued since `since`. */
  usage(clientId: string, since: Instant): Promise<{ users: number; tokensSince: number }>;
}
