import type { User } from '../../core/ports.js';
import type { Deps } from '../../deps.js';
import { UsageError } from '../command.js';

export async function findUser(deps: Deps, username: string): Promise<User> {
  const user = await deps.stores.users.findByUsername(username);
  if (!user) throw new UsageError(`unknown user "${username}"`);
  return user;
}
