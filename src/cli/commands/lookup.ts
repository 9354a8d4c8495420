import type { User } from '../../core/accounts/ports.js';
import type { BaseDeps } from '../../base-deps.js';
import { UsageError } from '../command.js';

export async function findUser(deps: BaseDeps, username: string): Promise<User> {
  const user = await deps.stores.users.findByUsername(username);
  if (!user) throw new UsageError(`unknown user "${username}"`);
  return user;
}
