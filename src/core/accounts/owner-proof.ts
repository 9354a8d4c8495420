/**
 * The signed-in member proving again that they hold the account, before an act a browser left
 * signed in must not do alone: deleting the account, downloading its data. The password, or, with
 * two-step verification on, a code of the authenticator app or a recovery code in its place, each
 * counted exactly as a sign-in is (INTERFACE section 4), so the form cannot be used to guess.
 */
import type { User } from './ports.js';
import { type AttemptOrigin, type Throttled, confirmPassword } from './sign-in.js';
import { type TwoStepDeps, type Unreadable, confirmSecondFactor } from './two-step.js';

/** What the member typed: a password, or (two-step on) a code in its place. */
export interface OwnerProof {
  password: string;
  code: string;
}

export type OwnerProofRefusal =
  | { ok: false; reason: 'invalid'; field: 'password' | 'code'; message: string }
  | Unreadable
  | Throttled;

/**
 * `missing`: what to say when neither was typed, which names the act. A right password renews the
 * browser's device cookie (`deviceCookie`), as a sign-in does (INTERFACE section 4); a code does
 * not, as the sign-in's second step does not.
 */
export async function confirmOwner(
  deps: TwoStepDeps, user: User, proof: OwnerProof, origin: AttemptOrigin, missing: string,
): Promise<{ ok: true; deviceCookie?: string } | OwnerProofRefusal> {
  if (proof.password !== '') {
    const confirmed = await confirmPassword(deps, user, proof.password, origin);
    if (confirmed.ok) return { ok: true, deviceCookie: confirmed.deviceCookie };
    return confirmed.reason === 'wrong' ? { ok: false, reason: 'invalid', field: 'password', message: 'that password is not right' } : confirmed;
  }
  if (proof.code.trim() !== '') {
    const checked = await confirmSecondFactor(deps, user, proof.code.trim(), origin);
    if (checked.ok) return { ok: true };
    return checked.reason === 'wrong' ? { ok: false, reason: 'invalid', field: 'code', message: 'that code is not right, or was used already' } : checked;
  }
  return { ok: false, reason: 'invalid', field: 'password', message: missing };
}
