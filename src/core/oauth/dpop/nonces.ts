/**
 * Server nonces for DPoP proofs (RFC 9449 8 and 9), stateless: the nonce of a time slot is an
 * HMAC-SHA256 of the slot's number under a random key every instance shares
 * (`SharedKeys`, `dpop-nonce-hmac`), so any instance checks a nonce another one gave, and nothing is stored
 * per client. A nonce is given for the current slot and accepted in it and the next two (so it
 * lives two to three slots), and in the slot before (an instance whose clock runs a little ahead
 * gave it).
 */
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../credentials/formats.js';
import type { SharedKeys } from '../../credentials/shared-keys.js';
import type { Instant } from '../../time.js';

/** The length of a nonce's time slot. */
export const NONCE_SLOT_SECONDS = 60;
/** How many slots after its own a nonce is still accepted. */
const SLOTS_AFTER = 2;

export type NonceCheck = 'current' | 'valid' | 'invalid';

export class DpopNonces {
  private readonly bySlot = new Map<number, string>();

  constructor(private readonly keys: SharedKeys) {}

  /** The nonce to give at `now`. */
  current(now: Instant): Promise<string> {
    return this.ofSlot(slotOf(now));
  }

  /** `current` when `nonce` is the one `current` gives, `valid` when it is still accepted, else `invalid`. */
  async check(nonce: string, now: Instant): Promise<NonceCheck> {
    const slot = slotOf(now);
    if (constantTimeEqual(nonce, await this.ofSlot(slot))) return 'current';
    for (const other of [slot - 1, slot - 2, slot + 1]) {
      if (constantTimeEqual(nonce, await this.ofSlot(other))) return 'valid';
    }
    return 'invalid';
  }

  private async ofSlot(slot: number): Promise<string> {
    const known = this.bySlot.get(slot);
    if (known !== undefined) return known;
    const nonce = createHmac('sha256', await this.keys.key('dpop-nonce-hmac')).update(`dpop-nonce.${slot}`).digest('base64url');
    if (this.bySlot.size >= 8) this.bySlot.clear();
    this.bySlot.set(slot, nonce);
    return nonce;
  }
}

function slotOf(now: Instant): number {
  return Math.floor(now / 1000 / NONCE_SLOT_SECONDS);
}

/** How long after it is given a nonce is accepted at most, in seconds (for the docs and tests). */
export const NONCE_LIFETIME_SECONDS = (SLOTS_AFTER + 1) * NONCE_SLOT_SECONDS;
