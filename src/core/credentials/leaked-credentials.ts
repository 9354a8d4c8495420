/**
 * Leaked credentials (INTERFACE section 11, issue 19 item 6), after GitHub's credential revocation
 * API: anyone may report up to 1,000 strings found exposed, and every live access token, refresh
 * token, personal token or client secret among them is revoked and its owner told in the security
 * log. The reporter learns nothing about which strings were valid: the answer is the same, and
 * the work is the same per string as far as it can be (docs/threat-model.md, T54).
 *
 * A string is recognised by its prefix and checksum (INTERFACE section 2), which anyone can check
 * offline, so sorting garbage out before storage reveals nothing; everything else is found by its
 * SHA-256, a batch of hashes per statement.
 */
import type { AuditSink, LeakSource } from '../audit.js';
import { type TokenKind, hashSecret, tokenKind } from './formats.js';
import { OAuthError } from '../errors.js';
import { addressKey } from '../addresses.js';
import { queueBackchannelLogouts } from '../oidc/logout/events.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { Stores } from '../stores.js';
import type { LeakedHashes, RevokedLeak } from './ports.js';
import type { NewSecurityEvent, SecurityLog } from '../accounts/security-log.js';
import { throttled } from '../accounts/sign-in.js';
import type { Clock } from '../time.js';
import type { CounterPort } from '../oauth/tokens/context.js';

/** Most strings one report may name (GitHub's limit too). */
export const MAX_REPORTED_CREDENTIALS = 1000;
/** Longest string a report may name: ours are 43 characters; room for anyone's token, not for a file. */
export const MAX_CREDENTIAL_LENGTH = 256;
/** Reports one address may send in a window (GitHub's: 60 an hour). */
export const LEAK_REPORTS_PER_ADDRESS = 60;
export const LEAK_REPORT_WINDOW_SECONDS = 3600;

export interface LeakDeps {
  readonly stores: Stores;
  readonly clock: Clock;
  readonly limiter: RateLimiter;
  readonly audit: AuditSink;
  readonly securityLog: SecurityLog;
  readonly metrics: { readonly tokensRevoked: CounterPort<'reason'> };
  readonly settings: { readonly refreshReplaySeconds: number };
}

/** One reported string, and where the reporter found it (a secret scanner says; a URL). */
export interface ReportedCredential {
  value: string;
  foundAt?: string | undefined;
}

export interface LeakReport {
  source: LeakSource;
  /** The reporter's address (for the limit and the audit line; never shown to the owners). */
  address: string;
  credentials: readonly ReportedCredential[];
  /** The report's request id (`reqId`), which its audit lines carry. */
  requestId?: string | undefined;
}

/**
 * Counts a report against its address's limit; refuses it with 429 and `Retry-After` (seconds to
 * the window's end) past `LEAK_REPORTS_PER_ADDRESS` an hour.
 */
export async function admitLeakReport(deps: Pick<LeakDeps, 'limiter' | 'clock'>, address: string): Promise<void> {
  const now = deps.clock.now();
  const decision = await deps.limiter.hit(`leak-report:address:${addressKey(address)}`, LEAK_REPORTS_PER_ADDRESS, LEAK_REPORT_WINDOW_SECONDS, now);
  if (decision.allowed) return;
  const retryAfter = throttled(decision, now).retryAfterSeconds;
  throw new OAuthError('rate_limited', `Too many reports from this address: at most ${LEAK_REPORTS_PER_ADDRESS} an hour. Try again in ${retryAfter} seconds.`, {
    headers: { 'retry-after': String(retryAfter) },
  });
}

/**
 * The strings of a report checked for shape: a list of 1 to `MAX_REPORTED_CREDENTIALS` strings of
 * 1 to `MAX_CREDENTIAL_LENGTH` characters; anything else is `invalid_request`.
 */
export function reportedStrings(value: unknown): string[] {
  if (!Array.isArray(value)) {
    throw new OAuthError('invalid_request', 'Send a JSON object whose credentials member is the list of the strings found (or the bare list).');
  }
  if (value.length === 0 || value.length > MAX_REPORTED_CREDENTIALS) {
    throw new OAuthError('invalid_request', `A report names from 1 to ${MAX_REPORTED_CREDENTIALS} credentials; split a longer list.`);
  }
  for (const item of value) {
    if (typeof item !== 'string' || item.length === 0 || item.length > MAX_CREDENTIAL_LENGTH) {
      throw new OAuthError('invalid_request', `Each credential is a string of 1 to ${MAX_CREDENTIAL_LENGTH} characters.`);
    }
  }
  return value as string[];
}

interface Sorted {
  hash: string;
  kind: TokenKind | undefined;
  foundAt: string | undefined;
}

/** Hashes every string (the same work for each) and sorts the hashes by the kind each string claims. */
function sortReport(credentials: readonly ReportedCredential[]): { sorted: Sorted[]; hashes: LeakedHashes } {
  const byKind: Record<TokenKind, Set<string>> = { access: new Set(), refresh: new Set(), personal: new Set(), clientSecret: new Set() };
  const sorted = credentials.map((credential) => {
    const entry = { hash: hashSecret(credential.value), kind: tokenKind(credential.value), foundAt: credential.foundAt };
    if (entry.kind !== undefined) byKind[entry.kind].add(entry.hash);
    return entry;
  });
  const hashes = { access: [...byKind.access], refresh: [...byKind.refresh], personal: [...byKind.personal], clientSecret: [...byKind.clientSecret] };
  return { sorted, hashes };
}

const EVENT_KIND = {
  access: 'access_token.revoked_as_leaked',
  refresh: 'refresh_token.revoked_as_leaked',
  personal: 'personal_token.revoked_as_leaked',
  clientSecret: 'client_secret.revoked_as_leaked',
} as const;

const REASON: Record<LeakSource, string> = {
  report: 'after a leak report',
  secret_scanning: 'after a secret scanner found it exposed',
};

/**
 * What the owner's security log says: which credential (an app's name, a token's label and id,
 * never the secret), why, and where it was found when the scanner said. No address: the
 * reporter's is none of the owner's business.
 */
function ownerEvent(revoked: RevokedLeak, source: LeakSource, foundAt: string | undefined): NewSecurityEvent | undefined {
  const detail: Record<string, string> = { reason: REASON[source], ...(foundAt ? { where: foundAt } : {}) };
  switch (revoked.kind) {
    case 'access':
    case 'refresh':
      return { userId: revoked.userId, kind: EVENT_KIND[revoked.kind], detail: { ...detail, app: revoked.clientName, client_id: revoked.clientId, token_id: String(revoked.tokenId) } };
    case 'personal':
      return { userId: revoked.userId, kind: EVENT_KIND.personal, detail: { ...detail, name: revoked.name, token_id: String(revoked.tokenId) } };
    case 'clientSecret':
      // A client registered by the operator alone (`svc client create` without --owner) has no one to tell but the log.
      return revoked.ownerId === null ? undefined : { userId: revoked.ownerId, kind: EVENT_KIND.clientSecret, detail: { ...detail, app: revoked.clientName, client_id: revoked.clientId } };
  }
}

/**
 * Revokes every live credential a report names, in one transaction with its back-channel logouts
 * and its owners' security-log events, then writes the audit lines. With `identify`, also says of
 * each reported string whether it names a credential ever issued here (a secret scanner's
 * `true_positive`); the public endpoint never asks. `announce` queues the owners' notices, for the
 * caller to run after its commit as every change's (`afterCommit`): the credentials are revoked
 * by then, and a notice that cannot be queued must not answer the report as failed.
 */
export async function handleLeakReport(
  deps: LeakDeps, report: LeakReport, options: { identify: boolean } = { identify: false },
): Promise<{ known: boolean[]; announce: () => Promise<void> }> {
  const { sorted, hashes } = sortReport(report.credentials);
  const known = options.identify ? await deps.stores.leakedCredentials.known(hashes) : new Set<string>();
  const foundAt = new Map(sorted.filter((s) => s.foundAt).map((s) => [s.hash, s.foundAt]));
  const now = deps.clock.now();
  const { revoked, announce } = await deps.stores.transaction(async (tx) => {
    // A rotated refresh token within the replay window still yields its successors: it is revoked too.
    const outcome = await tx.leakedCredentials.revoke(hashes, now, now - deps.settings.refreshReplaySeconds * 1000);
    // RFC 9700 4.14.2: the family of a leaked refresh token ends; its app is told of the ended sign-in.
    await queueBackchannelLogouts(tx, now, outcome.grants.map((g) => ({ ...g, cause: 'reported_leaked' as const })));
    const events = outcome.revoked.map((r) => ownerEvent(r, report.source, foundAt.get(r.tokenHash))).filter((e) => e !== undefined);
    return { revoked: outcome.revoked, announce: await deps.securityLog.recordAll(events, tx.securityEvents) };
  });
  if (revoked.length > 0) deps.metrics.tokensRevoked.inc({ reason: 'reported_leaked' }, revoked.length);
  for (const r of revoked) {
    deps.audit.record({
      audit: 'credential.revoked_as_leaked', source: report.source, kind: r.kind,
      ...(r.kind === 'clientSecret' ? { userId: r.ownerId, clientId: r.clientId } : { userId: r.userId, tokenId: r.tokenId }),
    }, report.requestId);
  }
  deps.audit.record({ audit: 'leak_report.received', source: report.source, address: report.address, submitted: report.credentials.length, revoked: revoked.length }, report.requestId);
  return { known: sorted.map((s) => known.has(s.hash)), announce };
}
