/**
 * Secret-scanning alerts in the format of GitHub's secret scanning partner program: a JSON array
 * of `{token, type, url, source}`, signed with ECDSA P-256 and SHA-256 over the raw body, the
 * signature (DER, base64) in `Github-Public-Key-Signature` and the key's identifier in
 * `Github-Public-Key-Identifier`; the answer is `[{token_raw, token_type, label}]`, `label` being
 * `true_positive` or `false_positive`. The public keys are the operator's (SECRET_SCANNING_KEYS).
 */
import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { OAuthError } from '../errors.js';
import type { ReportedCredential } from './leaked-credentials.js';

/** Most matches one alert may carry. */
export const MAX_ALERT_MATCHES = 1000;
const MAX_TOKEN_LENGTH = 256;
const MAX_FIELD_LENGTH = 2048;

/** A public key the operator configured, by the identifier alerts name it with. */
export interface ScanningKey {
  id: string;
  /** SPKI PEM of a P-256 public key. */
  pem: string;
}

export interface AlertMatch {
  token: string;
  type: string;
  url: string;
  source: string;
}

export type Label = 'true_positive' | 'false_positive';

/** The keys as key objects, once at start. */
export class ScanningKeys {
  private readonly keys: Map<string, KeyObject>;

  constructor(keys: readonly ScanningKey[]) {
    this.keys = new Map(keys.map((k) => [k.id, createPublicKey(k.pem)]));
  }

  get configured(): boolean {
    return this.keys.size > 0;
  }

  /**
   * Refuses an alert whose signature is missing (400) or does not verify over the raw body with
   * the key it names (401). ECDSA signatures are DER-encoded (`dsaEncoding: 'der'`), as GitHub sends them.
   */
  verify(keyId: string | undefined, signature: string | undefined, body: Buffer): void {
    if (!keyId || !signature) {
      throw new OAuthError('invalid_request', 'An alert carries the headers Github-Public-Key-Identifier and Github-Public-Key-Signature.');
    }
    const key = this.keys.get(keyId);
    let valid = false;
    try {
      valid = key !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(signature)
        && verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
    } catch {
      // A signature OpenSSL cannot even read is as wrong as one that does not verify.
    }
    if (!valid) {
      throw new OAuthError('invalid_client', 'The alert\'s signature does not verify with the key it names.');
    }
  }
}

/** Whether a configured key is a P-256 public key; the settings refuse any other. */
export function isP256PublicKey(pem: string): boolean {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}

const text = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;

/** The alert's matches checked for shape (1 to `MAX_ALERT_MATCHES`); anything else is `invalid_request`. */
export function alertMatches(body: unknown): AlertMatch[] {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_ALERT_MATCHES) {
    throw new OAuthError('invalid_request', `An alert is a JSON array of 1 to ${MAX_ALERT_MATCHES} objects {token, type, url, source}.`);
  }
  return body.map((item: unknown) => {
    const match = item as Partial<Record<keyof AlertMatch, unknown>> | null;
    if (typeof match !== 'object' || match === null || !text(match.token, MAX_TOKEN_LENGTH) || match.token === ''
      || !text(match.type ?? '', MAX_FIELD_LENGTH) || !text(match.url ?? '', MAX_FIELD_LENGTH) || !text(match.source ?? '', MAX_FIELD_LENGTH)) {
      throw new OAuthError('invalid_request', `Each match has a string token of at most ${MAX_TOKEN_LENGTH} characters, and string type, url and source.`);
    }
    return { token: match.token, type: (match.type as string | undefined) ?? '', url: (match.url as string | undefined) ?? '', source: (match.source as string | undefined) ?? '' };
  });
}

/** The report a leak handler takes: each token, with where it was found. */
export function reportedFromAlert(matches: readonly AlertMatch[]): ReportedCredential[] {
  return matches.map((m) => ({ value: m.token, foundAt: m.url || undefined }));
}

/** GitHub's feedback format: each token as sent, its type, and whether it named a credential of ours. */
export function alertFeedback(matches: readonly AlertMatch[], known: readonly boolean[]): Array<{ token_raw: string; token_type: string; label: Label }> {
  return matches.map((m, i) => ({ token_raw: m.token, token_type: m.type, label: known[i] ? 'true_positive' : 'false_positive' }));
}
