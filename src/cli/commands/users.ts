import { USERNAME_RULE, checkUsername, createAccount, isUserStatus, setAccountStatus, setPassword } from '../../core/accounts/accounts.js';
import { NICKNAME_MAX_LENGTH, checkNickname } from '../../core/accounts/nicknames.js';
import { ConflictError } from '../../core/errors.js';
import { USER_STATUSES, type User, type UserStatus } from '../../core/accounts/ports.js';
import { makeStaffChange } from '../../core/staff/staff.js';
import { formatUtc } from '../../core/time.js';
import { COUNTER_MAX, PASSWORD_OPTIONS, UsageError, defineCommand, optionalCount, optionalString, readPassword, requiredString } from '../command.js';
import { withNotices } from '../owner-notices.js';
import { findUser } from './lookup.js';
import { REASON_OPTION } from './staff.js';

const PASSWORD_RULE = 'passwords are 8 to 256 characters, not the username, not only spaces';

export const userCreate = defineCommand({
  name: 'user create',
  summary: 'create an account',
  description: `Creates an active account (${PASSWORD_RULE}). Reserved names such as "admin" are allowed here, not at sign-up.`,
  usage: `--username U ${PASSWORD_OPTIONS.usage} [--nickname N] [--bio T] [--member] [--level N] [--xp N]`,
  options: {
    username: { type: 'string' }, ...PASSWORD_OPTIONS.options, nickname: { type: 'string' }, bio: { type: 'string' },
    member: { type: 'boolean' }, level: { type: 'string' }, xp: { type: 'string' },
  },
  help: {
    username: USERNAME_RULE, ...PASSWORD_OPTIONS.help,
    nickname: `the name the site shows, in any script (1 to ${NICKNAME_MAX_LENGTH} characters; default: the username)`, bio: 'a one-line introduction (160 characters at most)',
    member: 'a member', level: 'the user level (default 1)', xp: 'experience points (default 0)',
  },
  prints: '{"id","username"}',
  async run(deps, values, io) {
    const { stores, clock } = deps;
    // Refused before a password is asked for: nobody types one twice to learn the name was taken.
    // Read as sign-in reads it (full-width letters too), and stored so.
    const username = checkUsername(requiredString(values, 'username'));
    const nickname = optionalString(values, 'nickname');
    if (nickname !== undefined) checkNickname(nickname);
    if (await stores.users.findByUsername(username)) throw new ConflictError(`username "${username}" is taken`);
    const bio = optionalString(values, 'bio');
    const level = optionalCount(values, 'level');
    const xp = optionalCount(values, 'xp', COUNTER_MAX);
    const account: Parameters<typeof createAccount>[2] = {
      username, password: await readPassword(values, io, username), member: values.member === true,
    };
    if (nickname !== undefined) account.nickname = nickname;
    if (bio !== undefined) account.bio = bio;
    if (level !== undefined) account.level = level;
    if (xp !== undefined) account.xp = xp;
    const user = await createAccount(stores, clock, account);
    deps.audit.record({ audit: 'account.created', userId: user.id, username: user.username, via: 'cli' });
    return { id: user.id, username: user.username };
  },
  human: (r) => `created user ${r.username} (id ${r.id})`,
});

const LIST_LIMIT = { default: 100, max: 1000 };

function listedUser(user: User) {
  return {
    id: user.id, username: user.username, status: user.status, member: user.member,
    level: user.level, xp: user.xp, created_at: formatUtc(user.createdAt),
  };
}

export const userList = defineCommand({
  name: 'user list',
  summary: 'list accounts, a page at a time',
  description: `Lists accounts by id, ${LIST_LIMIT.default} at a time: pass the printed next_after as --after for the next page.`,
  usage: `[--status ${USER_STATUSES.join('|')}] [--after ID] [--limit N]`,
  options: { status: { type: 'string' }, after: { type: 'string' }, limit: { type: 'string' } },
  help: {
    status: 'only accounts of this status',
    after: 'only accounts with an id above ID (the previous page\'s next_after)',
    limit: `at most N accounts (default ${LIST_LIMIT.default}, at most ${LIST_LIMIT.max})`,
  },
  prints: '{"users":[{"id","username","status","member","level","xp","created_at"}],"next_after"}: next_after is null on the last page',
  async run(deps, values) {
    const status = optionalString(values, 'status');
    if (status !== undefined && !isUserStatus(status)) throw new UsageError(`unknown status "${status}": use ${USER_STATUSES.join(', ')}`);
    const limit = optionalCount(values, 'limit') ?? LIST_LIMIT.default;
    if (limit < 1 || limit > LIST_LIMIT.max) throw new UsageError(`--limit must be from 1 to ${LIST_LIMIT.max}`);
    const users = await deps.stores.users.list({
      afterId: optionalCount(values, 'after') ?? 0, limit, ...(status === undefined ? {} : { status: status as UserStatus }),
    });
    return { users: users.map(listedUser), next_after: users.length === limit ? users[users.length - 1]!.id : null };
  },
  human: (r) => {
    if (r.users.length === 0) return 'no accounts';
    const rows = r.users.map((u) => `${String(u.id).padStart(6)}  ${u.username.padEnd(30)}  ${u.status.padEnd(9)}  ${u.created_at}`);
    return [...rows, ...(r.next_after === null ? [] : [`(more: --after ${r.next_after})`])].join('\n');
  },
});

export const userSetStatus = defineCommand({
  name: 'user set-status',
  summary: 'suspend, ban, delete or reactivate an account',
  description: 'Changes an account\'s status. Leaving active ends every session, app grant and personal token of the account, for good. Written to the staff log.',
  usage: `--username U --status ${USER_STATUSES.join('|')} ${REASON_OPTION.usage}`,
  options: { username: { type: 'string' }, status: { type: 'string' }, ...REASON_OPTION.options },
  help: { username: 'the account (any letter case)', status: 'the new status', ...REASON_OPTION.help },
  prints: '{"id","status"}',
  async run(deps, values) {
    const status = requiredString(values, 'status');
    if (!isUserStatus(status)) throw new UsageError(`unknown status "${status}": use ${USER_STATUSES.join(', ')}`);
    const reason = REASON_OPTION.read(values);
    const user = await findUser(deps, requiredString(values, 'username'));
    const changed = await makeStaffChange(withNotices(deps), {
      actor: { via: 'cli' }, action: 'member.status', target: { kind: 'member', id: String(user.id), name: user.username }, reason,
      change: async (tx) => {
        const result = await setAccountStatus(tx, deps.clock, user.id, status);
        return result && { result, detail: { from: user.status, status } };
      },
    });
    if (!changed) throw new UsageError(`unknown user "${user.username}"`);
    const updated = changed.result;
    deps.audit.record({ audit: 'account.status_changed', via: 'cli', userId: updated.id, status: updated.status });
    return { id: updated.id, status: updated.status };
  },
  human: (r) => `user ${r.id} is now ${r.status}`,
});

export const userSetPassword = defineCommand({
  name: 'user set-password',
  summary: 'set an account\'s password; ends its sessions',
  description: `Sets a new password (${PASSWORD_RULE}) and ends every sign-in session of the account; apps the user authorized and personal tokens keep working.`,
  usage: `--username U ${PASSWORD_OPTIONS.usage}`,
  options: { username: { type: 'string' }, ...PASSWORD_OPTIONS.options },
  help: { username: 'the account (any letter case)', ...PASSWORD_OPTIONS.help },
  prints: '{"id","sessions_ended"}',
  async run(deps, values, io) {
    const user = await findUser(deps, requiredString(values, 'username'));
    const password = await readPassword(values, io, user.username);
    const changed = await setPassword(deps.stores, deps.clock, user, password);
    if (!changed) throw new UsageError(`unknown user "${user.username}"`);
    deps.audit.record({ audit: 'account.password_changed', via: 'cli', userId: user.id, sessionsEnded: changed.sessionsEnded });
    return { id: user.id, sessions_ended: changed.sessionsEnded };
  },
  human: (r) => `new password set for user ${r.id}; ${r.sessions_ended} sign-in session${r.sessions_ended === 1 ? '' : 's'} ended`,
});
