/**
 * Recovery codes: ten single-use codes shown once when two-step verification is turned on, for
 * when the authenticator app is lost. Each is 80 random bits (16 base32 characters, shown in
 * groups of four), so, as with tokens (INTERFACE section 2), only its SHA-256 is stored: a
 * guess costs the same against the hash as against the sign-in form, and 2^80 is out of reach.
 * Argon2 would add nothing to that and cost a hash per stored code at every use.
 */
import { randomBytes } from 'node:crypto';
import { hashSecret } from '../credentials/formats.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const LENGTH = 16;

export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let code = '';
    // 32 symbols: each byte's low five bits are uniform.
    for (const byte of randomBytes(LENGTH)) code += ALPHABET[byte & 31];
    return code.match(/.{4}/g)!.join('-');
  });
}

/**
 * The code as typed, reduced to its characters: letter case, spaces and hyphens do not matter, nor
 * full width (`ＡＢＣＤ－…`, typed by a Chinese input method in full-width mode: NFKC, UAX #15).
 */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.normalize('NFKC').toLowerCase().replace(/[\s-]/g, '');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined;
}

export function hashRecoveryCode(code: string): string {
  return hashSecret(`recovery:${normalizeRecoveryCode(code) ?? code}`);
}
