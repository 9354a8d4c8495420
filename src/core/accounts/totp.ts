/**
 * Time-based one-time passwords (RFC 6238) as authenticator apps make them: HMAC-SHA-1, 6 digits,
 * 30-second steps, with the `otpauth` library. A code is accepted for its own step and one step
 * either side (RFC 6238 5.2: clock drift and the time to type it), and a step once accepted never
 * again (`SecondFactorStore.acceptTotpStep`), so a code seen over a shoulder cannot be replayed.
 */
import { Secret, TOTP } from 'otpauth';
import type { Instant } from '../time.js';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now that are still accepted (RFC 6238 5.2 recommends at most one). */
const TOTP_WINDOW = 1;
/** RFC 4226 4: a shared secret of 160 bits. */
const SECRET_BYTES = 20;

function totp(secretBase32: string, account = '', issuer = ''): TOTP {
  return new TOTP({ issuer, label: account, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

/** A new random secret, base32 (what the `otpauth://` URI carries). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** The Key Uri Format authenticator apps read from the QR code: `otpauth://totp/Issuer:account?…`. */
export function totpUri(secretBase32: string, account: string, issuer: string): string {
  return totp(secretBase32, account, issuer).toString();
}

/** The code of `at` (tests and nothing else make codes). */
export function totpCode(secretBase32: string, at: Instant): string {
  return totp(secretBase32).generate({ timestamp: at });
}

/**
 * The six digits of a code as typed, or `undefined`: spaces dropped (apps show `123 456`), and
 * full-width digits (`１２３４５６`, what a Chinese input method in full-width mode types) read as
 * the digits they are (NFKC, Unicode UAX #15).
 */
function typedDigits(code: string): string | undefined {
  const token = code.normalize('NFKC').replace(/\s/g, '');
  return /^\d{6}$/.test(token) ? token : undefined;
}

/** Whether `code` has the shape of a TOTP code: six digits as `typedDigits` reads them. */
export function looksLikeTotpCode(code: string): boolean {
  return typedDigits(code) !== undefined;
}

/** The time step whose code `code` is, within the window around `now`, or `undefined`. */
export function matchingStep(secretBase32: string, code: string, now: Instant): number | undefined {
  const token = typedDigits(code);
  if (token === undefined) return undefined;
  const generator = totp(secretBase32);
  const delta = generator.validate({ token, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? undefined : generator.counter({ timestamp: now }) + delta;
}
