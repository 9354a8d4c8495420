import { createAccount, isUserStatus, setAccountStatus } from '../../core/accounts.js';
import { USER_STATUSES } from '../../core/ports.js';
import { UsageError, defineCommand, optionalCount, optionalString, requiredString } from '../command.js';
import { findUser } from './lookup.js';

export const userCreate = defineCommand({
  name: 'user create',
  usage: 'user create --username U --password P [--bio T] [--member] [--level N] [--xp N]',
  options: {
    username: { type: 'string' }, password: { type: 'string' }, bio: { type: 'string' },
    member: { type: 'boolean' }, level: { type: 'string' }, xp: { type: 'string' },
  },
  async run({ stores, clock }, values) {
    const account: Parameters<typeof createAccount>[2] = {
      username: requiredString(values, 'username'),
      password: requiredString(values, 'password'),
      member: values.member === true,
    };
    const bio = optionalString(values, 'bio');
    const level = optionalCount(values, 'level');
    const xp = optionalCount(values, 'xp');
    if (bio !== undefined) account.bio = bio;
    if (level !== undefined) account.level = level;
    if (xp !== undefined) account.xp = xp;
    const user = await createAccount(stores, clock, account);
    return { id: user.id, username: user.username };
  },
  human: (r) => `created user ${r.username} (id ${r.id})`,
});

export const userSetStatus = defineCommand({
  name: 'user set-status',
  usage: `user set-status --username U --status ${USER_STATUSES.join('|')}`,
  options: { username: { type: 'string' }, status: { type: 'string' } },
  async run(deps, values) {
    const status = requiredString(values, 'status');
    if (!isUserStatus(status)) throw new UsageError(`unknown status "${status}": use ${USER_STATUSES.join(', ')}`);
    const user = await findUser(deps, requiredString(values, 'username'));
    const updated = await setAccountStatus(deps.stores, deps.clock, user.id, status);
    if (!updated) throw new UsageError(`unknown user "${user.username}"`);
    return { id: updated.id, status: updated.status };
  },
  human: (r) => `user ${r.id} is now ${r.status}`,
});
