/** User passwords: argon2id (INTERFACE section 2), with OWASP's minimum parameters. */
import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id`, spelled out: the package exports it as an ambient const enum. */
const ARGON2ID = 2;

const PARAMETERS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMETERS);
}

/** A hash of nothing anyone knows, verified when the account is unknown so both cases cost the same. */
const decoyHash = hashPassword('decoy password that matches no account');

/** Verifies `password` against `passwordHash`, or spends the same time when there is no hash. */
export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  try {
    if (passwordHash === undefined) {
      await verify(await decoyHash, password);
      return false;
    }
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
