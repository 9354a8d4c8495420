/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, INTERFACE section
 * 13): a `client_id` that is an https URL with a path names a JSON document that describes the app.
 * It is fetched when the app first asks (authorize, PAR, token), validated strictly, and kept for
 * as long as its Cache-Control says, between 5 minutes and 24 hours, in a cache of bounded size;
 * a failure is kept too, for a minute or as its answer's Cache-Control says up to 5 minutes, one
 * that may pass (no answer, 408, 429, 5xx) for 5 seconds.
 * Such an app is a public client (PKCE required); it is stored as a client row only when a member
 * approves it or it pushes a request (the rows grants and pushed requests refer to), never merely
 * because someone named it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Requester, siteShare } from '../addresses.js';
import type { AuditSink } from '../audit.js';
import { BoundedQueue, QueueFullError } from '../bounded-queue.js';
import { InputError, OAuthError, asErrorDescription, checkAll } from '../errors.js';
import type { Stores } from '../stores.js';
import { checkedText, trustClaimCheck } from '../text.js';
import { type Clock, type Instant, hasExpired } from '../time.js';
import { HOST_AS_A_BROWSER_WRITES_IT, canBeClientId, checkPostLogoutRedirectUris, checkRedirectUris, findClient, isLoopbackHost, writesHostAsRead } from './clients.js';
import type { Client } from './ports.js';
import { REGISTERED_SCOPES } from './scopes.js';

/** The draft's limits, and ours: the fetch ends by then, and reads no more. */
export const DOCUMENT_FETCH_TIMEOUT_MS = 5_000;
export const DOCUMENT_MAX_BYTES = 5 * 1024;
/** How long a document is kept, whatever its Cache-Control says. */
const DOCUMENT_CACHE_SECONDS = { min: 5 * 60, max: 24 * 60 * 60 };
/**
 * How long a failed fetch is answered from memory, whatever its answer's Cache-Control says (but
 * a failure that may pass: `PASSING_FAILURE_SECONDS`): a broken or hostile document's host is asked at most once a minute per
 * id, not once per request that names it, and the author of a broken one sees the mended one
 * within a minute, or as long as their own answer said up to a kept document's least.
 */
export const FAILURE_CACHE_SECONDS = { min: 60, max: DOCUMENT_CACHE_SECONDS.min };
/**
 * How long a failure that may pass is kept, whatever its answer's Cache-Control says: no answer
 * at all (the network's trouble, or ours: a fetch that waited on a loaded instance), 408, 429 or a
 * 5xx (RFC 9110 15.5.9 and 15.6, RFC 6585 4: the host's passing trouble). Anyone may name an app's document, so
 * a blip met by one request would otherwise refuse the app to everyone for a minute, or for the
 * 5 minutes a CDN's error page says; as long as a fetch may take, it still spares the host a fetch
 * per request.
 */
const PASSING_FAILURE_SECONDS = DOCUMENT_FETCH_TIMEOUT_MS / 1000;
/**
 * How long a document's app's row is kept with no grant and no consent since its document last
 * refreshed it: anyone can store one by pushing a request (at most 60 seconds of use), and a host
 * that answers every path with a valid document would otherwise add rows without end.
 */
export const DOCUMENT_CLIENT_GRACE_MS = 86_400_000;
/**
 * How long a document's app's row is left unwritten when it already says what its document says:
 * half the grace, so a row still in use always has at least half of it left before the janitor
 * may take it (far more than a pushed request or a code lives), and an approval or a push costs a
 * write only when the document changed or the row is older than this. Writing it every time was
 * about 5 % of a returning user's code flow.
 */
export const DOCUMENT_CLIENT_REFRESH_MS = DOCUMENT_CLIENT_GRACE_MS / 2;
/** Documents kept at once, and as many failures; the least recently used goes first. */
export const DOCUMENT_CACHE_ENTRIES = 1000;
/**
 * Fetches at once. To one host, at most `DOCUMENT_FETCHES_PER_HOST` run and as many more wait for a
 * turn, in arrival order, a share (`siteShare`) taking the newest place of the share holding the
 * most when the line is full (`BoundedQueue`); a host is its name (final dots aside), and its
 * default port is one line and every other port together another, so ids on ports a firewall
 * drops, each holding a turn to the fetch limit, cannot keep the host's real documents waiting.
 * Per instance, at most `DOCUMENT_FETCHES_IN_FLIGHT` run, and at most `DOCUMENT_FETCHES_HELD` are
 * held in all: running, waiting for a turn, or held to the fetch limit after getting no answer. A
 * fetch hands its turn on when the fetcher ends, so one that got no answer (a closed port, a
 * refused address) hands it on at once though its requester hears so only at the fetch limit, and
 * it counts among those held until then: ids that fail fast start at most `DOCUMENT_FETCHES_HELD`
 * fetches per fetch limit, whatever the rate of requests. Ids that name slow hosts hold at most
 * `DOCUMENT_FETCHES_IN_FLIGHT` outbound connections; a burst of first requests for different
 * documents of one host waits its turn instead of being refused.
 */
export const DOCUMENT_FETCHES_IN_FLIGHT = 64;
export const DOCUMENT_FETCHES_HELD = 2 * DOCUMENT_FETCHES_IN_FLIGHT;
export const DOCUMENT_FETCHES_PER_HOST = 8;
/**
 * Fetches one address may hold of the `DOCUMENT_FETCHES_HELD`: those it started, until they end
 * (a fetch it joins is not counted again). Without a share, one sender naming ids on hosts that do
 * not exist, about 26 requests a second, kept every place full and every new document app refused
 * on the instance. A fetch that answers gives its place back within its round trip, so eight are
 * reached only by ids that fail, or by more than eight people behind one address each bringing a
 * new app within the same few seconds. Sixteen senders are needed to fill the places. An address
 * is its site here (`siteKey`: an IPv6 /48), as for the line to argon2, and its browsers count
 * apart from its other programs (`siteShare`): a page that has its visitors' browsers open the
 * authorization endpoint with ids on hosts that never answer holds only the browsers' places,
 * and a native app or agent behind the same address still has its document fetched (attack62).
 */
export const DOCUMENT_FETCHES_HELD_PER_ADDRESS = 8;

/**
 * What the outbound adapter brings back: the answer, or why there is none; `answered` when the
 * server sent a status line before the fetch failed (too large, too slow to finish).
 */
export type FetchedDocument =
  | { ok: true; status: number; cacheControl: string | undefined; body: Buffer }
  | { ok: false; answered: boolean; error: string };

/** The port the outbound adapter implements: one GET through the guarded path, no redirects followed. */
export interface ClientMetadataFetcher {
  fetch(url: string): Promise<FetchedDocument>;
}

export interface ClientMetadataSettings {
  /** CLIENT_ID_METADATA_DOCUMENTS: off, a URL client_id names no app. */
  readonly enabled: boolean;
  /** CLIENT_METADATA_ALLOW_PRIVATE: also `http://` on a loopback host (development). */
  readonly allowPrivate: boolean;
  /** CLIENT_METADATA_HOSTS: host names and `*.suffix` patterns; `undefined`: any host. */
  readonly hosts: readonly string[] | undefined;
}

/** A document that cannot name an app, and why (English: the error page and `invalid_client` say it). */
export class ClientDocumentError extends Error {
  override readonly name = 'ClientDocumentError';

  /** RFC 6749 5.2: an error_description holds printable ASCII without `"` and `\`; the document's own text may not. */
  constructor(message: string) {
    super(asErrorDescription(message));
  }
}

/**
 * A document not fetched because the instance holds as many fetches as it may, in all or for the
 * asking address (`DOCUMENT_FETCHES_HELD`, `DOCUMENT_FETCHES_HELD_PER_ADDRESS`), or is shutting
 * down: nothing is wrong with the app, so it is 503 `temporarily_unavailable` with `Retry-After`
 * (RFC 6749 4.1.2.1's code for a server that cannot serve for now) wherever the app is named, a
 * page at the authorization endpoint and JSON at the others, never `invalid_client`, which a
 * client library may take as its registration gone. Held fetches end within the fetch limit.
 */
export class DocumentFetchesBusyError extends OAuthError {
  constructor(description: string) {
    super('temporarily_unavailable', description, { headers: { 'retry-after': String(DOCUMENT_FETCH_TIMEOUT_MS / 1000) } });
  }
}

/** Whether `clientId` is meant as a document's address: ours are hex, so any http(s) URL is. */
function isDocumentClientId(clientId: string): boolean {
  return clientId.startsWith('https://') || clientId.startsWith('http://');
}

/** The host a document client's id names, shown first on the consent page and on the member's list. */
export function documentHost(client: Pick<Client, 'clientId'>): string | undefined {
  return isDocumentClientId(client.clientId) ? new URL(client.clientId).host : undefined;
}

/**
 * Whether nobody answers for `client`: it registered itself (RFC 7591), is named by its own
 * document, or a member registered it on the developer page (an account anyone can make), so its
 * redirect URIs are its own claims; and staff have not verified it. The operator's apps (the
 * command line's, the demo's) are answered for by the operator.
 */
export function isUnreviewedApp(client: Pick<Client, 'clientId' | 'selfRegistered' | 'memberRegistered' | 'verifiedAt'>): boolean {
  return client.verifiedAt === null && (client.selfRegistered || client.memberRegistered || isDocumentClientId(client.clientId));
}

/** Whether `hostname` is one `hosts` allows: a name exactly, or under a `*.suffix`. */
function hostAllowed(hosts: readonly string[], hostname: string): boolean {
  const host = hostname.toLowerCase();
  return hosts.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
}

/** Seconds an answer may be kept: `max-age` clamped to `bounds`; none, `no-store` or `no-cache`: the least. */
function cacheSeconds(cacheControl: string | undefined, bounds: { min: number; max: number }): number {
  const directives = (cacheControl ?? '').toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return bounds.min;
  const maxAge = directives.map((d) => /^max-age="?(\d{1,10})"?$/.exec(d)).find((m) => m !== null);
  const seconds = maxAge ? Number(maxAge[1]) : 0;
  return Math.min(bounds.max, Math.max(bounds.min, seconds));
}

/** Seconds the failure of `fetched` is kept: `PASSING_FAILURE_SECONDS`, or as `FAILURE_CACHE_SECONDS` says. */
function failureSeconds(fetched: FetchedDocument): number {
  if (fetched.ok ? fetched.status === 408 || fetched.status === 429 || fetched.status >= 500 : !fetched.answered) return PASSING_FAILURE_SECONDS;
  return cacheSeconds(fetched.ok ? fetched.cacheControl : undefined, FAILURE_CACHE_SECONDS);
}

/** The app a valid document describes. */
interface DescribedApp {
  name: string;
  homepageUrl: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

/**
 * A kept document's app, with whether its name claims the site's trust (`trustClaimCheck`),
 * weighed once when the document is read: the check walks every look-alike table, about as
 * much CPU as the rest of a code flow, and its answer changes only with the document.
 */
interface DocumentClient extends DescribedApp {
  claimsSiteTrust: boolean;
}

/**
 * Why `clientId` cannot be a document's address (draft section 3), or `undefined`: https (or http
 * on a loopback host when private addresses are allowed), a path, no fragment, no credentials, no
 * dot segments, written as the URL parser writes it (so one app has one id), and short enough to
 * be a client_id at all.
 */
function documentUrlProblem(clientId: string, settings: ClientMetadataSettings): string | undefined {
  if (!canBeClientId(clientId)) return 'The client_id is too long to be a client ID metadata document URL (at most 200 characters).';
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'The client_id is not a valid URL.';
  }
  const loopbackHttp = url.protocol === 'http:' && settings.allowPrivate && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) return 'A client ID metadata document URL must use https.';
  if (url.username || url.password || clientId.includes('#')) return 'A client ID metadata document URL must not hold credentials or a fragment.';
  if (url.pathname === '/') return 'A client ID metadata document URL must have a path.';
  // The parser removes dot segments and lower-cases the host: an id it would rewrite is refused.
  if (url.href !== clientId) return 'A client ID metadata document URL must be written in its normal form, without dot segments.';
  if (settings.hosts !== undefined && !hostAllowed(settings.hosts, url.hostname)) {
    return `This service does not accept apps described by documents on ${url.hostname} (CLIENT_METADATA_HOSTS).`;
  }
  return undefined;
}

function optionalString(document: Record<string, unknown>, field: string): string | undefined {
  const value = document[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InputError(field, `${field} must be a string`);
  return value;
}

function stringArray(document: Record<string, unknown>, field: string): string[] | undefined {
  const value = document[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new InputError(field, `${field} must be an array of strings`);
  return value as string[];
}

/** An https (or, when allowed, loopback http) address the consent page may link to, or ''. */
function optionalPageUrl(document: Record<string, unknown>, field: string, settings: ClientMetadataSettings): string {
  const value = optionalString(document, field);
  if (value === undefined || value === '') return '';
  checkedText(field, value, { kind: 'name', max: 2000 });
  let url: URL | undefined;
  try { url = new URL(value); } catch { url = undefined; }
  const loopbackHttp = url?.protocol === 'http:' && settings.allowPrivate && isLoopbackHost(url.hostname);
  if (!url || (url.protocol !== 'https:' && !loopbackHttp) || url.username || url.password) throw new InputError(field, `${field} must be an https URL`);
  // Shown as written beside its link, as an app's homepage is (`optionalHttpUrl`, attack122). The
  // refusal names no host: the error page is this site's (`UriNaming`, `by place`).
  if (!writesHostAsRead(value, url)) throw new InputError(field, `${field} must write its host as a browser reads it (${HOST_AS_A_BROWSER_WRITES_IT})`);
  return value;
}

function subsetOf(document: Record<string, unknown>, field: string, allowed: readonly string[]): void {
  const values = stringArray(document, field);
  // Named by place, never quoted, as a bad address is (`UriNaming`, `by place`).
  const other = values?.findIndex((v) => !allowed.includes(v)) ?? -1;
  if (other !== -1) throw new InputError(field, `${field} may hold only ${allowed.join(', ')}, not what ${field}[${other}] holds`);
}

/**
 * The app a fetched document describes, or a `ClientDocumentError` naming every problem (draft
 * section 4): a JSON object whose `client_id` is the URL it was fetched from, a `client_name`,
 * `redirect_uris` by the rules of apps registered on the site, a public client (no secret; the
 * only authentication method `none`), and only the grants this service has. An address the app's
 * row holds (`stored`, written from an earlier copy) is kept as it is, as a registered app's is
 * (`checkRedirectUris`): one saved before a rule was made stricter (":443") still names the app.
 */
function parseClientDocument(clientId: string, fetched: FetchedDocument & { ok: true }, settings: ClientMetadataSettings, stored: Client | undefined): DescribedApp {
  if (fetched.status !== 200) {
    const redirect = fetched.status >= 300 && fetched.status < 400 ? ' (redirects are not followed)' : '';
    throw new ClientDocumentError(`The client ID metadata document at ${clientId} answered HTTP ${fetched.status}${redirect}; it must answer 200.`);
  }
  let document: unknown;
  try {
    document = JSON.parse(fetched.body.toString('utf8'));
  } catch {
    throw new ClientDocumentError(`The client ID metadata document at ${clientId} is not JSON.`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new ClientDocumentError(`The client ID metadata document at ${clientId} is not a JSON object.`);
  }
  const fields = document as Record<string, unknown>;
  try {
    const [, name, homepageUrl, , redirectUris, postLogoutRedirectUris] = checkAll(
      () => {
        // Draft section 4.1: the document names itself; any other id is someone else's app.
        if (fields.client_id !== clientId) throw new InputError('client_id', 'client_id must equal the URL the document was fetched from');
      },
      () => checkedText('client_name', optionalString(fields, 'client_name') ?? '', { kind: 'name', max: 80 }),
      () => optionalPageUrl(fields, 'client_uri', settings),
      () => optionalPageUrl(fields, 'logo_uri', settings),
      // Named by place, never quoted: the error page is this site's, and the document's author
      // chooses what it would say to whoever they send there.
      () => checkRedirectUris(stringArray(fields, 'redirect_uris') ?? [], 'by place', stored?.redirectUris),
      () => checkPostLogoutRedirectUris(stringArray(fields, 'post_logout_redirect_uris') ?? [], 'by place', stored?.postLogoutRedirectUris),
      () => {
        // Draft section 4.1: a document holds no shared secret; so the app is public.
        if ('client_secret' in fields || 'client_secret_expires_at' in fields) throw new InputError('client_secret', 'a client ID metadata document must not hold client_secret or client_secret_expires_at');
        const method = optionalString(fields, 'token_endpoint_auth_method');
        if (method !== undefined && method !== 'none') throw new InputError('token_endpoint_auth_method', 'token_endpoint_auth_method must be none or absent (a public client using PKCE)');
      },
      () => subsetOf(fields, 'grant_types', ['authorization_code', 'refresh_token']),
      () => subsetOf(fields, 'response_types', ['code']),
    );
    return { name, homepageUrl, redirectUris, postLogoutRedirectUris };
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new ClientDocumentError(`The client ID metadata document at ${clientId} is not valid: ${error.problems.map((p) => p.message).join('; ')}.`);
  }
}

/** Whether the stored row `stored` holds what the document says now (what `saveDescribed` would write). */
function rowDescribes(stored: Client, described: DescribedApp): boolean {
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);
  return stored.name === described.name && stored.homepageUrl === described.homepageUrl
    && same(stored.redirectUris, described.redirectUris) && same(stored.postLogoutRedirectUris, described.postLogoutRedirectUris);
}

/**
 * Apps `resolve` made whose stored row said what their document says and was written less than
 * `DOCUMENT_CLIENT_REFRESH_MS` before: `storeDocumentClient` has nothing to write for them. Held
 * by the object, so it lasts as long as the request that resolved it.
 */
const currentRows = new WeakSet<Client>();

/** Values kept until they expire, at most `capacity` of them: the least recently used goes first. */
class KeptUntil<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: Instant }>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value of `key` if it is kept and fresh at `now`; an expired one is let go. */
  get(key: string, now: Instant): T | undefined {
    const kept = this.entries.get(key);
    if (kept === undefined) return undefined;
    this.entries.delete(key);
    if (hasExpired(kept.expiresAt, now)) return undefined;
    // Least recently used goes first: a hit moves the entry to the end.
    this.entries.set(key, kept);
    return kept.value;
  }

  set(key: string, value: T, expiresAt: Instant): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

/**
 * The documents, fetched through the port, kept in a bounded cache. Requests for an id whose
 * fetch is under way or waiting wait for that one fetch; fetches are bounded per host and per
 * instance as `DOCUMENT_FETCHES_PER_HOST` says. Once the instance closes, the waiting are refused
 * and no new fetch starts: a request then waits at most for the fetches under way (the fetch
 * limit), well within the shutdown's grace.
 */
export class ClientMetadataDocuments {
  private readonly cache = new KeptUntil<DocumentClient>(DOCUMENT_CACHE_ENTRIES);
  /** Why the last fetch of an id failed (`FAILURE_CACHE_SECONDS`); never a refusal of ours (`DocumentFetchesBusyError`). */
  private readonly failures = new KeptUntil<string>(DOCUMENT_CACHE_ENTRIES);
  private readonly fetching = new Map<string, Promise<DocumentClient>>();
  /** A host's turns; a host with nothing under way or waiting has no entry. */
  private readonly hostTurns = new Map<string, BoundedQueue>();
  /** Fetches holding a turn; the rest of `fetching` wait for one or are held to the fetch limit. */
  private running = 0;
  /** Fetches in `fetching` by the site of the address that started them; a site holding none has no entry. */
  private readonly heldBySite = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly fetcher: ClientMetadataFetcher,
    private readonly clock: Clock,
    private readonly audit: AuditSink,
    readonly settings: ClientMetadataSettings,
    /** The site's name in each language (`siteNamesIn`), which a document's app may not call itself. */
    private readonly siteNames: readonly string[] = [],
  ) {}

  /** How many documents are kept now. */
  get size(): number {
    return this.cache.size;
  }

  /**
   * Fetches holding a turn, those waiting for one on their host's line, and all those the instance
   * holds (these, and those held to the fetch limit after getting no answer), for tests and
   * diagnostics.
   */
  get fetches(): { running: number; waiting: number; held: number } {
    let waiting = 0;
    for (const turns of this.hostTurns.values()) waiting += turns.state.waiting;
    return { running: this.running, waiting, held: this.fetching.size };
  }

  /**
   * The app `clientId` names, as a `Client`: its stored row's status and times when it has one,
   * the document's name and addresses always. A fetch it starts counts against the share of
   * `askedBy`, who sent the request. Throws `ClientDocumentError`, or
   * `DocumentFetchesBusyError` when it may not fetch now.
   */
  async resolve(stores: Stores, clientId: string, askedBy: Requester): Promise<Client> {
    // A kept document's address passed these checks before it was fetched, under the same
    // settings: an agent's every request need not parse its URL again.
    if (!this.cache.has(clientId)) {
      const problem = documentUrlProblem(clientId, this.settings);
      if (problem) throw new ClientDocumentError(problem);
    }
    const row = stores.clients.findById(clientId);
    const [described, stored] = await Promise.all([this.document(clientId, askedBy, row), row]);
    const now = this.clock.now();
    const describedAsStored = stored !== undefined && rowDescribes(stored, described);
    const client: Client = {
      clientId,
      name: described.name,
      description: '',
      homepageUrl: described.homepageUrl,
      ownerId: null,
      type: 'public',
      redirectUris: described.redirectUris,
      allowedScopes: [...REGISTERED_SCOPES],
      status: stored?.status ?? 'active',
      secretHash: null,
      previousSecret: null,
      idTokenAlg: 'RS256',
      postLogoutRedirectUris: described.postLogoutRedirectUris,
      backchannelLogoutUri: null,
      requirePushedAuthorizationRequests: false,
      selfRegistered: false,
      memberRegistered: false,
      // Staff may vouch for an app that describes itself too (INTERFACE section 14), for the name,
      // homepage and addresses they saw, which are the row's: a document that says otherwise is not
      // what they vouched for, from the moment it is read, before any write ends the mark (attack88).
      verifiedAt: describedAsStored ? stored.verifiedAt : null,
      createdAt: stored?.createdAt ?? now,
      updatedAt: stored?.updatedAt ?? now,
    };
    // Nobody at the site answers for the name a document gives (`unreviewedNameRule`): one that
    // claims the site's trust names no app, unless staff verified the app with it.
    if (client.verifiedAt === null && described.claimsSiteTrust) {
      throw new ClientDocumentError(`The client ID metadata document at ${clientId} is not valid: client_name must not claim this site's trust: no check mark, no word such as Verified or Official, and not the site's own name alone or with words that make it the site's own service.`);
    }
    if (describedAsStored && now - stored.updatedAt < DOCUMENT_CLIENT_REFRESH_MS) currentRows.add(client);
    return client;
  }

  /** The app `clientId`'s document describes, kept or fetched; `row` is the app's stored row, which a fetched copy is checked with (`parseClientDocument`). */
  private async document(clientId: string, askedBy: Requester, row: Promise<Client | undefined>): Promise<DocumentClient> {
    const now = this.clock.now();
    const kept = this.cache.get(clientId, now);
    if (kept) return kept;
    const failed = this.failures.get(clientId, now);
    if (failed !== undefined) throw new ClientDocumentError(failed);
    // One host however it is written (`example.com.` is `example.com` to DNS): a line for its
    // default port, one for all its others.
    const url = new URL(clientId);
    const host = `${url.hostname.replace(/\.+$/, '')}${url.port === '' ? '' : ' (other ports)'}`;
    const site = siteShare(askedBy);
    const underWay = this.fetching.get(clientId);
    if (underWay) {
      this.hostTurns.get(host)?.shareWith(clientId, site);
      return underWay;
    }
    const turns = this.hostTurns.get(host) ?? new BoundedQueue(DOCUMENT_FETCHES_PER_HOST, DOCUMENT_FETCHES_PER_HOST);
    const startsNow = turns.state.running < DOCUMENT_FETCHES_PER_HOST;
    const heldBySite = this.heldBySite.get(site) ?? 0;
    if (this.closed || this.fetching.size >= DOCUMENT_FETCHES_HELD || (startsNow && this.running >= DOCUMENT_FETCHES_IN_FLIGHT)) {
      throw new DocumentFetchesBusyError(TOO_MANY_FETCHES);
    }
    if (heldBySite >= DOCUMENT_FETCHES_HELD_PER_ADDRESS) throw new DocumentFetchesBusyError(TOO_MANY_FETCHES_FROM_ADDRESS);
    this.hostTurns.set(host, turns);
    this.heldBySite.set(site, heldBySite + 1);
    // The turn is held only while the fetcher runs: a fetch with no answer (a closed port) gives it
    // back before it is held to the fetch limit, still counted in `fetching` until then. The line
    // is asked for by the share (`BoundedQueue`'s longest queue drop): when two addresses' browsers
    // fill a host's turns and line, a native app's fetch takes the newest place of the share
    // holding the most, and waits its turn instead of being refused (attack64). A request that
    // joins a waiting fetch makes the place its share's too (`shareWith`), so whoever started it
    // cannot have it pushed out from under the joiner (attack65, attack66).
    const fetch = turns.run(async () => {
      this.running += 1;
      const started = performance.now();
      try {
        return { started, fetched: await this.fetcher.fetch(clientId) };
      } finally {
        this.running -= 1;
      }
    }, { asker: site, piece: clientId })
      .catch((error: unknown) => {
        throw error instanceof QueueFullError ? new DocumentFetchesBusyError(TOO_MANY_FETCHES) : error;
      })
      .then(({ started, fetched }) => this.documentFrom(clientId, started, fetched, row))
      .finally(() => {
        this.fetching.delete(clientId);
        const held = this.heldBySite.get(site)! - 1;
        if (held === 0) this.heldBySite.delete(site);
        else this.heldBySite.set(site, held);
        const { running, waiting } = turns.state;
        if (running === 0 && waiting === 0 && this.hostTurns.get(host) === turns) this.hostTurns.delete(host);
      });
    this.fetching.set(clientId, fetch);
    return fetch;
  }

  /** Refuses the requests waiting for a turn and every new fetch: the instance is shutting down. */
  close(): void {
    this.closed = true;
    for (const turns of this.hostTurns.values()) turns.refuseWaiting('the instance is shutting down');
  }

  /**
   * The app `fetched` describes, kept in the cache; or why there is none, said at the fetch limit
   * when nothing answered, and kept as long as `failureSeconds` says.
   */
  private async documentFrom(clientId: string, started: number, fetched: FetchedDocument, row: Promise<Client | undefined>): Promise<DocumentClient> {
    try {
      const client = await this.parsedFrom(clientId, started, fetched, row);
      this.cache.set(clientId, client, this.clock.now() + cacheSeconds(fetched.ok ? fetched.cacheControl : undefined, DOCUMENT_CACHE_SECONDS) * 1000);
      return client;
    } catch (error) {
      if (error instanceof ClientDocumentError) this.failures.set(clientId, error.message, this.clock.now() + failureSeconds(fetched) * 1000);
      throw error;
    }
  }

  private async parsedFrom(clientId: string, started: number, fetched: FetchedDocument, row: Promise<Client | undefined>): Promise<DocumentClient> {
    if (!fetched.ok && fetched.answered) throw new ClientDocumentError(`The client ID metadata document at ${clientId} could not be fetched: ${fetched.error}.`);
    if (!fetched.ok) {
      // Every fetch that got no answer reads the same and ends at the fetch limit: a refused
      // address, a name that does not resolve, a closed port and a silent host are one to the
      // requester, so a URL client_id is no probe of hosts and ports (RFC 6819 4.4.1.13 context).
      // The operator reads the reason in the audit line.
      this.audit.record({ audit: 'client_document.unreachable', clientId, reason: fetched.error });
      await sleep(Math.max(0, started + DOCUMENT_FETCH_TIMEOUT_MS - performance.now()));
      throw new ClientDocumentError(`The client ID metadata document at ${clientId} could not be fetched: no answer within ${DOCUMENT_FETCH_TIMEOUT_MS / 1000} s from a server this service may reach.`);
    }
    const described = parseClientDocument(clientId, fetched, this.settings, await row);
    return { ...described, claimsSiteTrust: (await trustClaimCheck())(described.name, this.siteNames).length > 0 };
  }
}

const TOO_MANY_FETCHES = 'This service is fetching too many client ID metadata documents at once; try again in a few seconds.';
const TOO_MANY_FETCHES_FROM_ADDRESS = `Requests from your network are waiting for ${DOCUMENT_FETCHES_HELD_PER_ADDRESS} client ID metadata documents already; try again in a few seconds.`;

/** Where an app is looked up: the stores, and the documents when this site accepts them. */
export interface ClientSources {
  readonly stores: Stores;
  readonly clientDocuments: ClientMetadataDocuments;
}

/**
 * The client `clientId` names, or `undefined`: a document's app when the id is a URL (and
 * documents are on), else a registered one. `askedBy` sent the request, and a document fetch
 * counts against its share. Throws `ClientDocumentError` for a bad document, and
 * `DocumentFetchesBusyError` when the document may not be fetched now.
 */
export async function resolveClient(sources: ClientSources, clientId: string, askedBy: Requester): Promise<Client | undefined> {
  if (!isDocumentClientId(clientId)) return findClient(sources.stores, clientId);
  if (!sources.clientDocuments.settings.enabled) return undefined;
  return sources.clientDocuments.resolve(sources.stores, clientId, askedBy);
}

/** Whether `storeDocumentClient` has nothing to write for `client`: a registered app, or a document's whose row says what it says now. */
export function hasCurrentRow(client: Client): boolean {
  return !isDocumentClientId(client.clientId) || currentRows.has(client);
}

/**
 * Stores a document's app as a client row, or refreshes the row it has (name and addresses as the
 * document says now; its status stays), before a grant or a pushed request refers to it; nothing
 * when `resolve` found the row saying the same and written within `DOCUMENT_CLIENT_REFRESH_MS`.
 */
export async function storeDocumentClient(stores: Stores, clock: Clock, client: Client): Promise<void> {
  if (hasCurrentRow(client)) return;
  await stores.clients.saveDescribed(client, clock.now());
}
