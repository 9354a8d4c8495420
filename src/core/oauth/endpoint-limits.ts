/**
 * Rate limits of the endpoints where a client authenticates (token, PAR, revocation,
 * introspection; RFC 6749 2.3.1: an endpoint that takes a client's password MUST be protected
 * against brute force; RFC 6819 4.3.5: online guessing of a client secret, countered by locking,
 * 5.1.4.2.3, which can be abused to lock legitimate users out)
 * and of pushed authorization requests (RFC 9126 7.1 leaves their number to the server):
 * - failed client authentications (`invalid_client`) in windows of `CLIENT_AUTH_WINDOW_SECONDS`,
 *   counted per address and the client it claims, per address in the clients it failed for, and
 *   per client. Successes never count, so an app's backend that refreshes for thousands of users
 *   from one address is never limited.
 *   An address past its failures for one client is refused for that client, before any lookup,
 *   until the window ends; the other apps behind it go on. RFC 6819 5.1.4.2.3 warns that locking
 *   can be abused to lock out legitimate users: refused for the whole address, one app retrying a
 *   rotated secret behind a cloud NAT, a cluster's egress or an office's proxy took every other
 *   app behind it off their tokens for the window.
 *   An address that has failed for more clients than `clientAuthClientsPerAddress` (counted by a
 *   client's first failure from it in the window) is refused before any lookup until the window
 *   ends, whatever client it names: one that walks through client_ids guesses no faster than the
 *   two quotas' product.
 *   Once a client is past its own limit, an address that fails for it is refused for that client
 *   until the window ends: someone sending wrong secrets for a client never locks out the app
 *   itself, which does not fail, and a guesser spread over many addresses gets one guess per
 *   address and share (two, writing `Origin` on one of them).
 *   A request that offers no secret (`offersSecret`: a public client's, client_id alone) guesses
 *   none, so it is neither refused nor counted: otherwise another site's page could send failing
 *   requests naming unknown apps from its visitors' browsers and lock every browser and native app
 *   at their address (a carrier's NAT included) out of their tokens for the window (attack58).
 * - at an address, what browsers send and what other programs send count apart (`addressShare`):
 *   every browser sends `Origin` with a POST and a page cannot remove it, so a page on another
 *   site that has its visitors' browsers send wrong secrets, or push for its own public app, uses
 *   up only the browsers' share of their address; the confidential apps' backends, native apps
 *   and command-line tools behind it (an office's or a carrier's NAT) go on. A guesser at one
 *   address gets the two shares' quota, no more.
 * - checks under way at once, per address and instance: at most `CLIENT_AUTH_CHECKS_AT_ONCE`; the
 *   rest wait their turn (at most `CLIENT_AUTH_CHECKS_WAITING`, then 429) and look again at the
 *   marks when it comes. Failures are known only once checked, so without this a burst sent at
 *   once was checked whole before its first failures were counted (issue 30); with it, a burst of
 *   wrong secrets for one client is checked at most its failures per address +
 *   `CLIENT_AUTH_CHECKS_AT_ONCE` times per instance, while an app's backend sending hundreds of
 *   right ones at once only waits.
 * - pushes, counted per client for a confidential client (its own backend's) and per address for
 *   a public client (which anyone can push for with its client_id), in windows of
 *   `PUSH_WINDOW_SECONDS`.
 * A refusal is 429 `rate_limited` in the endpoints' JSON shape (RFC 6749 5.2) with `Retry-After`
 * and the IETF RateLimit fields. Counters live in the limiter (shared by every instance with
 * Redis); the "refused until the window ends" marks live in each instance, as the API's do
 * (`core/api/limits.ts`), so each instance checks one more secret to learn of the shared count:
 * every failure reads the address's count of clients, so that one is any failure from the
 * address, not only a new app's. Reading the counts before every check would cost each
 * confidential client's token request a Redis round trip, successes included.
 */
import { hash } from 'node:crypto';
import { addressShare, siteShare } from '../addresses.js';
import { OAuthError } from '../errors.js';
import { rateLimitPolicyField, throttledHeaders } from '../rate-limit-fields.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limiter.js';
import type { Instant } from '../time.js';
import { type ClientCredentials, offersSecret } from './client-auth.js';
import { isUnreviewedApp } from './client-metadata.js';
import type { Client } from './ports.js';
import type { CounterPort } from './tokens/context.js';

export const CLIENT_AUTH_WINDOW_SECONDS = 600;
export const PUSH_WINDOW_SECONDS = 60;
/**
 * Checks of client secrets from one address under way at once in one instance; more wait their
 * turn. A failure counts only once its check ends, so this bounds what a burst gets checked before
 * its failures block the address (issue 30: 617 of 1000 wrong secrets were checked with Redis).
 * Waiting rather than refusing: an app's backend refreshing for many users at once from one
 * address is slowed at worst, never refused. Held in the process, so a crash leaks no turn.
 */
export const CLIENT_AUTH_CHECKS_AT_ONCE = 128;
/** Requests of one address waiting for a turn; past it, 429 `client-auth-checks`. */
export const CLIENT_AUTH_CHECKS_WAITING = 1024;

/** The endpoints that authenticate a client, as the metrics label them. */
export type ClientEndpoint = 'token' | 'par' | 'revoke' | 'introspect';

/** What refused a request: the metrics' `scope` and the RateLimit fields' policy name. */
export type OAuthLimit = 'client-auth-address' | 'client-auth-address-client' | 'client-auth-checks' | 'client-auth-client' | 'push-address' | 'push-client';

export interface OAuthLimitSettings {
  /** CLIENT_AUTH_FAILURES_PER_ADDRESS: failed authentications of one client from one address per window. */
  readonly clientAuthFailuresPerAddress: number;
  /** CLIENT_AUTH_CLIENTS_PER_ADDRESS: clients one address may fail to authenticate per window. */
  readonly clientAuthClientsPerAddress: number;
  /** CLIENT_AUTH_FAILURES_PER_CLIENT: failed authentications of one client per window. */
  readonly clientAuthFailuresPerClient: number;
  /** PAR_PER_MINUTE_PER_CLIENT: pushes of one client a minute. */
  readonly pushesPerMinutePerClient: number;
  /** PAR_PER_MINUTE_PER_ADDRESS: pushes of public clients from one address a minute. */
  readonly pushesPerMinutePerAddress: number;
}

const DESCRIPTIONS: Readonly<Record<OAuthLimit, string>> = {
  'client-auth-address': 'Too many clients failed to authenticate from this address; wait for Retry-After seconds, then check the client_id and client secret.',
  'client-auth-address-client': 'Too many failed authentications of this client from this address; it is refused for this client until Retry-After seconds pass. Check the client secret (Settings > Developer applications).',
  'client-auth-checks': 'Too many client authentications from this address are waiting to be checked; retry after Retry-After seconds.',
  'client-auth-client': 'Too many failed authentications of this client; this address is refused for it until Retry-After seconds pass. Check the client secret (Settings > Developer applications).',
  'push-address': 'Too many pushed authorization requests from this address this minute; retry after Retry-After seconds.',
  'push-client': 'Too many pushed authorization requests by this client this minute; retry after Retry-After seconds.',
};

/** The client_id a request claims, before it is authenticated. */
function claimedClientId(credentials: ClientCredentials): string | undefined {
  return typeof credentials.basic === 'object' ? credentials.basic.clientId : credentials.bodyClientId;
}

/**
 * The claimed client as the per-address marks and counters name it: an unreadable Authorization
 * header with no `client_id` in the body names none, and all such requests of an address count as
 * one client (`-`, which no `clientKey` is).
 */
function claimedClientKey(clientId: string | undefined): string {
  return clientId === undefined ? '-' : clientKey(clientId);
}

/**
 * A claimed client_id as the marks and counters name it: a short hash, so a mark costs the same
 * for a client_id of any length (a request may claim one of several kilobytes).
 */
function clientKey(clientId: string): string {
  return hash('sha256', clientId, 'base64url').slice(0, 22);
}

/** Whether `decision` counted the first hit of its key in the window. */
function firstInWindow(decision: RateLimitDecision): boolean {
  return decision.allowed && decision.remaining === decision.limit - 1;
}

/** RFC 6749 2.3: `invalid_client` is the one answer to a failed client authentication. */
function failedClientAuthentication(error: unknown): boolean {
  return error instanceof OAuthError && error.code === 'invalid_client';
}

/** Marks held at most before they are forgotten at once: keys of at most about 80 characters, about 13 MB. */
const MAX_BLOCKS = 100_000;

export class OAuthEndpointLimits {
  /**
   * `address:<key>`, `address-client:<claimed>:<key>` (refused for a client by its own failures
   * from there) or `client:<clientKey>:<key>` (by the client's failures from anywhere), to the end
   * of their window (epoch seconds).
   */
  private readonly blockedUntil = new Map<string, number>();
  /** Per address key: checks under way, and the requests waiting for a turn, first come first served. */
  private readonly turns = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly settings: OAuthLimitSettings,
    private readonly refusals: CounterPort<'endpoint' | 'scope'>,
  ) {}

  /**
   * Runs `work`, which authenticates the client of `credentials`, unless its address
   * (`askedBy`) is refused (for every client, or for this one) or has too many requests waiting
   * for a turn; counts its failed client authentication, answering 429 instead of 401 when that
   * failure is one too many.
   */
  async authenticating<T>(endpoint: ClientEndpoint, credentials: ClientCredentials, now: Instant, work: () => Promise<T>): Promise<T> {
    if (!offersSecret(credentials)) return work();
    const key = addressShare(credentials.askedBy);
    const clientId = claimedClientId(credentials);
    const claimed = claimedClientKey(clientId);
    this.refuseMarked(endpoint, key, claimed, now);
    if (!(await this.takeTurn(key))) this.refuse(endpoint, 'client-auth-checks', Math.floor(now / 1000) + 1, now);
    try {
      // The failures counted while this request waited may have refused the address by now.
      this.refuseMarked(endpoint, key, claimed, now);
      return await work();
    } catch (error) {
      if (!failedClientAuthentication(error)) throw error;
      const { clientAuthFailuresPerAddress, clientAuthClientsPerAddress, clientAuthFailuresPerClient } = this.settings;
      const byPair = await this.limiter.hit(`client-auth:address-client:${key}:${claimed}`, clientAuthFailuresPerAddress, CLIENT_AUTH_WINDOW_SECONDS, now);
      // A client's first failure from the address in the window is one more client it failed for.
      // Any other failure reads the count, counting nothing: another instance may have refused the
      // address, which this one would otherwise learn only at a new app's failure, checking the
      // secrets of the apps already counted until each ran out of its own failures.
      const clients = `client-auth:clients:${key}`;
      const byAddress = firstInWindow(byPair)
        ? await this.limiter.hit(clients, clientAuthClientsPerAddress, CLIENT_AUTH_WINDOW_SECONDS, now)
        : await this.limiter.peek(clients, clientAuthClientsPerAddress, CLIENT_AUTH_WINDOW_SECONDS, now);
      if (!byAddress.allowed) this.block(endpoint, `address:${key}`, 'client-auth-address', byAddress.resetAt, now);
      if (!byPair.allowed) this.block(endpoint, `address-client:${claimed}:${key}`, 'client-auth-address-client', byPair.resetAt, now);
      if (clientId !== undefined) {
        const byClient = await this.limiter.hit(`client-auth:client:${claimed}`, clientAuthFailuresPerClient, CLIENT_AUTH_WINDOW_SECONDS, now);
        if (!byClient.allowed) this.block(endpoint, `client:${claimed}:${key}`, 'client-auth-client', byClient.resetAt, now);
      }
      throw error;
    } finally {
      // After the failure is counted (and the address perhaps blocked), so the next in line sees it.
      this.giveTurn(key);
    }
  }

  /** Refuses a request from `key`'s address claiming `claimed` while a mark for either stands. */
  private refuseMarked(endpoint: ClientEndpoint, key: string, claimed: string, now: Instant): void {
    this.refuseBlocked(endpoint, `address:${key}`, 'client-auth-address', now);
    this.refuseBlocked(endpoint, `address-client:${claimed}:${key}`, 'client-auth-address-client', now);
    this.refuseBlocked(endpoint, `client:${claimed}:${key}`, 'client-auth-client', now);
  }

  /** A turn to check a secret for `key`'s address: at once, after a wait, or `false` when too many wait. */
  private async takeTurn(key: string): Promise<boolean> {
    let turns = this.turns.get(key);
    if (turns === undefined) {
      turns = { active: 0, waiting: [] };
      this.turns.set(key, turns);
    }
    if (turns.active < CLIENT_AUTH_CHECKS_AT_ONCE) {
      turns.active += 1;
      return true;
    }
    if (turns.waiting.length >= CLIENT_AUTH_CHECKS_WAITING) return false;
    // The turn is handed over by `giveTurn`, which leaves `active` as it is.
    await new Promise<void>((resolve) => turns.waiting.push(resolve));
    return true;
  }

  private giveTurn(key: string): void {
    const turns = this.turns.get(key)!;
    const next = turns.waiting.shift();
    if (next !== undefined) next();
    else if (--turns.active === 0) this.turns.delete(key);
  }

  /**
   * Counts a push of `client` (authenticated) from `address`; throws 429 past its limit. A
   * confidential client's pushes come from its own servers and count per client. Anyone can push
   * for a public client with its client_id alone, so its pushes count per address only: counted
   * per client, two addresses at the address limit would lock every user of the app out. For a
   * public app nobody at the site answers for (`isUnreviewedApp`: a document's, which any URL that
   * answers a valid document names and whose push stores its row for a day, or one that registered
   * itself or a member registered) an IPv6 address counts by its /48 (`siteShare`), as its
   * registration does: counted by its /64, a /48, which a tunnel broker hands out free, pushed
   * 65,536 times the limit a minute, each push a stored row (attack122). An operator's or verified
   * app's pushes count by the /64 (`addressShare`), the customer its limit should hold to.
   */
  async admitPush(client: Client, credentials: ClientCredentials, now: Instant): Promise<void> {
    if (client.type !== 'public') {
      const byClient = await this.limiter.hit(`par:client:${client.clientId}`, this.settings.pushesPerMinutePerClient, PUSH_WINDOW_SECONDS, now);
      if (!byClient.allowed) this.refuse('par', 'push-client', byClient.resetAt, now);
      return;
    }
    const key = isUnreviewedApp(client) ? `par:site:${siteShare(credentials.askedBy)}` : `par:address:${addressShare(credentials.askedBy)}`;
    const byAddress = await this.limiter.hit(key, this.settings.pushesPerMinutePerAddress, PUSH_WINDOW_SECONDS, now);
    if (!byAddress.allowed) this.refuse('par', 'push-address', byAddress.resetAt, now);
  }

  private quota(limit: OAuthLimit): number {
    switch (limit) {
      case 'client-auth-address': return this.settings.clientAuthClientsPerAddress;
      case 'client-auth-address-client': return this.settings.clientAuthFailuresPerAddress;
      case 'client-auth-checks': return CLIENT_AUTH_CHECKS_AT_ONCE + CLIENT_AUTH_CHECKS_WAITING;
      case 'client-auth-client': return this.settings.clientAuthFailuresPerClient;
      case 'push-address': return this.settings.pushesPerMinutePerAddress;
      case 'push-client': return this.settings.pushesPerMinutePerClient;
    }
  }

  private refuseBlocked(endpoint: ClientEndpoint, mark: string, limit: OAuthLimit, now: Instant): void {
    const until = this.blockedUntil.get(mark);
    if (until === undefined) return;
    if (Math.floor(now / 1000) >= until) {
      this.blockedUntil.delete(mark);
      return;
    }
    this.refuse(endpoint, limit, until, now);
  }

  /** Refuses `mark` until `resetAt`, starting with this request. */
  private block(endpoint: ClientEndpoint, mark: string, limit: OAuthLimit, resetAt: number, now: Instant): never {
    if (this.blockedUntil.size >= MAX_BLOCKS) this.blockedUntil.clear();
    this.blockedUntil.set(mark, resetAt);
    return this.refuse(endpoint, limit, resetAt, now);
  }

  /** 429 with `Retry-After` and the RateLimit fields: nothing left until the window ends. */
  private refuse(endpoint: ClientEndpoint, limit: OAuthLimit, resetAt: number, now: Instant): never {
    this.refusals.inc({ endpoint, scope: limit });
    // Turns are not counted in a window: the quota is of requests at once, for a second.
    const window = limit === 'client-auth-checks' ? 1 : limit.startsWith('push') ? PUSH_WINDOW_SECONDS : CLIENT_AUTH_WINDOW_SECONDS;
    throw new OAuthError('rate_limited', DESCRIPTIONS[limit], {
      headers: {
        ...throttledHeaders(limit, resetAt - Math.floor(now / 1000)),
        'ratelimit-policy': rateLimitPolicyField({ name: limit, quota: this.quota(limit), windowSeconds: window }),
      },
    });
  }
}
