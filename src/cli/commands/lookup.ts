import { findTypedAccount } from '../../core/accounts/accounts.js';
import type { User } from '../../core/accounts/ports.js';
import type { BaseDeps } from '../../base-deps.js';
import { UsageError } from '../command.js';

/** The member `username` names, read as sign-in and `user create` read it (full-width letters too). */
export async function findUser(deps: BaseDeps, username: string): Promise<User> {
  const user = await findTypedAccount(deps.stores, username);
  if (!user) throw new UsageError(`unknown user "${username}"`);
  return user;
}
