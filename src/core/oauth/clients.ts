/** Client registrations (INTERFACE section 3): redirect URI rules, registration, secrets. */
import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { requireActiveAccount } from '../accounts/accounts.js';
import { generateToken, hashSecret } from '../credentials/formats.js';
import { InputError, type Words, checkAll } from '../errors.js';
import type { IdTokenAlg } from '../oidc/ports.js';
import type { Stores } from '../stores.js';
import type { Client, ClientDetails, ClientType } from './ports.js';
import { REGISTERED_SCOPES, type Scope } from './scopes.js';
import { checkedText, trustClaimCheck } from '../text.js';
import { percentEncodeNonAscii } from '../urls.js';
import { dayLimitRefusal } from '../day-limits.js';
import { type Clock, type Instant, hasExpired } from '../time.js';

/**
 * Active apps one member may register on the developer pages (GitHub's cap on OAuth apps per
 * owner): each is a row, a line of the page and a name on consent pages. Deactivated ones do not
 * count: deactivating is how an owner makes room, as no app is deleted (its row keeps its tokens
 * refused). Apps that register themselves (RFC 7591, client ID metadata documents) have no owner,
 * and the operator's (`svc client create`) answer to the operator: neither is counted or capped.
 */
export const MAX_APPS_PER_OWNER = 100;
/**
 * Apps one member may register on the developer pages in any 24 hours, deactivated ones included:
 * deactivating frees a place under `MAX_APPS_PER_OWNER`, so without it an owner deactivated and
 * registered in a loop and added rows without end. No app is deleted (its row keeps its tokens
 * refused), so this bounds how fast an owner's rows grow, not how many there are; a cap on every
 * app ever registered would leave an honest developer of many years no way to make room. 20 is
 * a development, staging and production app for each of six projects in one day, more than any
 * member sets up. Counted from the stored rows' registration times, so it holds across instances
 * and restarts.
 */
export const APP_REGISTRATIONS_PER_DAY = 20;

/** Ours are 32 hex characters; nothing longer is ever looked up. */
const CLIENT_ID_MAX_LENGTH = 200;

/**
 * Whether `value` could name a client at all. A value that cannot (empty, too long, or holding NUL,
 * which PostgreSQL text cannot hold) is never sent to the database: it names no client.
 */
export function canBeClientId(value: string): boolean {
  return value !== '' && value.length <= CLIENT_ID_MAX_LENGTH && !value.includes('\u0000');
}

/** The client `clientId` names, or `undefined`. */
export async function findClient(stores: Stores, clientId: string): Promise<Client | undefined> {
  return canBeClientId(clientId) ? stores.clients.findById(clientId) : undefined;
}

/** RFC 8252 7.1: a private-use URI scheme is a reverse domain name, so it holds a period. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/**
 * Why an address cannot be registered: the message of the API and the command line, the same
 * without anything taken from the address (`general`, for a reader the address may not reach: a
 * client ID metadata document's error page), and the pages' words (`apps` namespace).
 */
interface UriProblem {
  message: string;
  general: string;
  words: Words;
}

const problem = (message: string, key: string, values: Record<string, string> = {}, general = message): UriProblem => ({ message, general, words: { key: `apps.${key}`, values } });

/**
 * A URI's authority as written (RFC 3986 3.2), split where a browser splits it (WHATWG URL's
 * authority, host and port states), so that a rule compares what is written with what a browser
 * reads (`URL.hostname`, `URL.port`).
 */
export interface WrittenAuthority {
  /** The scheme before it, as written (its case included: RFC 3986 3.1 reads it in either). */
  scheme: string;
  /** All of it, as written. */
  written: string;
  /** All before its last `@`, or `undefined` without one. */
  userinfo: string | undefined;
  /** Up to the first colon outside an IPv6 literal's brackets. */
  host: string;
  /** All after the host's colon ('' for a colon alone), or `undefined` without one. */
  port: string | undefined;
  /** Path, query and fragment, from the character that ends the authority. */
  rest: string;
}

/** WHATWG URL's special schemes, in which a browser ends the authority at a backslash too, read as `/`. */
const SPECIAL_SCHEMES = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);
/** A host in an authority without its user information: a colon inside `[…]` is the host's, as a browser reads it. */
const HOST_IN_AUTHORITY = /^(?:[^:[]|\[[^\]]*(?:\]|$))*/;

/**
 * The authority of `uri` as a browser splits it (`WrittenAuthority`): it ends at `/`, `?`, `#`,
 * or in a special scheme's URI (http, https) at `\`; or `undefined` when `uri` has no `//` after
 * its scheme, so no authority (RFC 3986 3).
 */
export function writtenAuthority(uri: string): WrittenAuthority | undefined {
  const [, scheme, afterSlashes] = /^([a-z][a-z\d+.-]*):\/\/(.*)$/is.exec(uri) ?? [];
  if (afterSlashes === undefined) return undefined;
  const end = afterSlashes.search(SPECIAL_SCHEMES.has(scheme!.toLowerCase()) ? /[/?#\\]/ : /[/?#]/);
  const written = end === -1 ? afterSlashes : afterSlashes.slice(0, end);
  const at = written.lastIndexOf('@');
  const hostAndPort = written.slice(at + 1);
  const host = HOST_IN_AUTHORITY.exec(hostAndPort)![0];
  return {
    scheme: scheme!,
    written,
    userinfo: at === -1 ? undefined : written.slice(0, at),
    host,
    port: host.length < hostAndPort.length ? hostAndPort.slice(host.length + 1) : undefined,
    rest: afterSlashes.slice(written.length),
  };
}

/** RFC 3986 appendix B: a URI's path and query, as written (its authority: `writtenAuthority`). */
const URI_PARTS = /^[a-z][a-z\d+.-]*:(?:\/\/[^/?#]*)?([^?#]*)(?:\?([^#]*))?/i;
/**
 * RFC 3986 2: the characters a URI holds, unreserved and reserved ones, and `%` only before two hex
 * digits; `[` and `]` only around an IPv6 host (3.2.2). A backslash is none: a browser reads it as
 * `/` in an http(s) URI, so "https://evil.example\@trusted.example/cb" goes to evil.example.
 */
const URI_CHARACTERS = /^(?:[\w\-.~:/?#[\]@!$&'()*+,;=]|%[\da-f]{2})*$/i;
/**
 * A host of an http(s) URI that names one machine as written: a domain name or IPv4 address in
 * lower-case labels of letters, digits, hyphens and underscores, without an empty label (a
 * trailing dot names another origin), or an IPv6 literal. `*` is no wildcard (RFC 9700 2.1: exact
 * matching), and the rest of RFC 3986's sub-delims name no DNS host.
 */
const WEB_HOST = /^(?:[a-z\d_-]+(?:\.[a-z\d_-]+)*|\[[\da-f:.]+\])$/;
/** How a browser writes a host (`URL.hostname`), said without naming one. */
export const HOST_AS_A_BROWSER_WRITES_IT = 'lower case, not percent-encoded, IPv4 in four decimal parts, IPv6 compressed';
/** RFC 9110 4.2.1, 4.2.2: the port an http and an https URI name when they write none. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/**
 * Why a URI a client registers is no URI we accept, or the URL it is: an RFC 3986 absolute URI
 * (ASCII: an IRI must be percent-encoded first), no fragment (RFC 6749 3.1.2), no credentials, at
 * most 2000 characters, whose host is written as a browser reads it (WHATWG URL: lower case,
 * not percent-encoded, IPv4 in four decimal parts, IPv6 compressed), so that the service, the app
 * and the people who read the address all name the host the browser goes to; a web URI's host
 * is also a DNS name or an IP address (`WEB_HOST`), and its port one a browser reads as written
 * (`canonicalPort`), and its path one without `.` or `..` segments. No query parameter an app
 * reads (`queryNamesAsRead`) as one named in `addedNames`, which the service adds itself. A
 * redirect URI's caller then asks for the form a browser sends (`notWrittenAsSent`).
 */
function registeredUri(uri: string, addedNames: readonly string[]): URL | UriProblem {
  if (uri.length > 2000) return problem('is longer than 2000 characters', 'uriTooLong');
  if (/[\s\x00-\x1f\x7f]/.test(uri)) return problem('contains spaces or control characters', 'uriSpaces');
  if (/[^\x21-\x7e]/.test(uri)) return problem('contains characters outside ASCII (percent-encode them)', 'uriNotAscii');
  const [, path = '', query] = URI_PARTS.exec(uri) ?? [];
  const authority = writtenAuthority(uri);
  const written = authority?.written ?? '';
  const bracketsOutsideHost = /[[\]]/.test(path + (query ?? '')) || (/[[\]]/.test(written) && !/^\[[^\]]*\](?::\d*)?$/.test(written));
  if (!URI_CHARACTERS.test(uri) || bracketsOutsideHost) {
    return problem('holds a character no URI may hold (RFC 3986 2): a backslash, a quote, <, >, {, }, |, ^, a backquote, [ or ] outside an IPv6 host, or % not before two hex digits', 'uriCharacters');
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return problem('is not an absolute URL', 'uriNotAbsolute');
  }
  if (uri.includes('#')) return problem('has a fragment', 'uriFragment');
  if (url.username || url.password || authority?.userinfo !== undefined) return problem('contains credentials', 'uriCredentials');
  const host = authority?.host ?? '';
  if (isWebUrl(url) && host === '') return problem('has no host', 'uriNoHost');
  if (host !== url.hostname) {
    const hostname = quotedBoth(url.hostname);
    return problem(`writes its host so that a browser reads another name: write it as ${hostname.message}`, 'homepageHost', { host: hostname.words },
      `writes its host so that a browser reads another name: write it as a browser does (${HOST_AS_A_BROWSER_WRITES_IT})`);
  }
  if (isWebUrl(url) && !WEB_HOST.test(host)) return problem('has a host that is not a domain name or an IP address (no *, no trailing dot)', 'uriHostShape');
  if (isWebUrl(url) && !canonicalPort(authority?.port)) return problem('has port 0, an empty port or a port written with leading zeros', 'uriPort');
  // RFC 3986 5.2.4, WHATWG URL's path state: a browser removes `.` and `..` segments (`%2e` too)
  // from a path that starts with `/` (an opaque one, "com.example.app:a/../cb", it keeps), so
  // "https://a.example/alice/%2e%2e/mallory/cb" reads as alice's and goes to mallory's.
  if (path.startsWith('/') && path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) {
    const general = 'has a . or .. segment in its path, which a browser removes before it goes there';
    const pathname = quotedBoth(url.pathname);
    return problem(`${general}: write the path it goes to, ${pathname.message}`, 'uriDotSegment', { path: pathname.words }, general);
  }
  const added = queryNamesAsRead(query ?? '').find((name) => addedNames.includes(name));
  if (added !== undefined) return problem(`has a query parameter ${added}, which this service adds to the answer itself`, 'uriAddedParameter', { name: added });
  return url;
}

/**
 * Why `uri`, a redirect or post-logout redirect URI that passed every other rule, is not written as
 * a browser sends it, which exact matching compares (RFC 9700 2.1): its scheme in capitals (RFC
 * 3986 6.2.2.1, "HTTPS://app.example/cb") or its scheme's default port (6.2.3,
 * "https://app.example:443/cb"), two spellings of one address that compare as two. A loopback IP
 * URI's port is no such spelling: any port matches it at request time (RFC 8252 7.3,
 * `withoutLoopbackPort`), so "http://127.0.0.1:80/cb" and "http://127.0.0.1/cb" match each other.
 * Asked last, so the address the refusal says to write is one that is accepted.
 */
function notWrittenAsSent(uri: string, url: URL): UriProblem | undefined {
  const authority = writtenAuthority(uri);
  const port = authority?.port;
  const defaultPort = port !== undefined && port === DEFAULT_PORTS[url.protocol] && withoutLoopbackPort(uri, 'registered') === undefined;
  const afterScheme = defaultPort ? uri.slice(url.protocol.length, uri.length - authority!.rest.length - port.length - 1) + authority!.rest : uri.slice(url.protocol.length);
  const sent = url.protocol + afterScheme;
  const quotedSent = quotedBoth(sent);
  if (defaultPort) {
    const scheme = url.protocol.slice(0, -1);
    // Nothing breaks an app that sends the address exactly as registered; but a browser, and the
    // URL parsers apps build addresses with, write it without the port, and that string is another.
    const general = `writes the default port ${port} of ${scheme}, which browsers and URL parsers leave out when they write the address, so the address an app sends as they write it is another string, and addresses are compared as exact strings`;
    return problem(`${general}: write it as ${quotedSent.message}`, 'uriDefaultPort', { port, scheme, written: quotedSent.words }, `${general}: leave the port out`);
  }
  if (sent === uri) return undefined;
  const general = 'writes its scheme in capital letters, which a browser sends in lower case, so the two never match exactly';
  return problem(`${general}: write it as ${quotedSent.message}`, 'uriSchemeCase', { written: quotedSent.words }, `${general}: write the scheme in lower case`);
}

/**
 * Whether the port an http(s) URI writes (`WrittenAuthority.port`), if any, is one a browser goes
 * to as written: a number from 1 without leading zeros. Port 0 is no port a browser connects to
 * (Fetch's "bad port"), and the WHATWG URL parser reads `:00080` as port 80 and an empty `:` as
 * none, where the service would compare and send the URI as written (RFC 3986 6.2.3: the
 * canonical form has no such port).
 */
function canonicalPort(port: string | undefined): boolean {
  return port === undefined || /^[1-9]\d*$/.test(port);
}

/**
 * The names of a query's parameters as the frameworks apps are written in may read them, so that
 * none reads a registered one as a parameter the service adds: in any letter case (ASP.NET Core
 * looks names up so), parted by `;` as by `&` (Python's parse_qs before 3.9.2, Go's before 1.17),
 * `.` and a space as `_` and `name[…]` as `name` (PHP's `$_GET`).
 */
function queryNamesAsRead(query: string): string[] {
  return [...new URLSearchParams(query.replaceAll(';', '&')).keys()].map((name) => name.toLowerCase().replace(/\[.*$/, '').replace(/[. ]/g, '_'));
}

/**
 * The query parameters the service adds to a redirect URI: the authorization response's (RFC 6749
 * 4.1.2 `code` and `state`, 4.1.2.1 `error`, `error_description`, `error_uri`; RFC 9207 2 `iss`).
 * A registered URI holding one of them sends the app two, and an app that reads the first takes
 * the registered one (`https://a.example/cb?state=evil&code=x`).
 */
const AUTHORIZATION_RESPONSE_NAMES = ['code', 'state', 'error', 'error_description', 'error_uri', 'iss'];
/** RP-Initiated Logout 1.0 section 3: the service adds `state` to a post-logout redirect URI. */
const LOGOUT_RESPONSE_NAMES = ['state'];

/**
 * Why a redirect URI (or, with `addedNames` `LOGOUT_RESPONSE_NAMES`, a post-logout one) cannot be
 * registered, or `undefined` when it can: a `registeredUri` with https, http on a loopback host
 * (RFC 8252 7.3), or a private-use scheme of a native app (RFC 8252 7.1), written as a browser
 * sends it (`notWrittenAsSent`).
 */
function redirectProblem(uri: string, addedNames: readonly string[] = AUTHORIZATION_RESPONSE_NAMES): UriProblem | undefined {
  const url = registeredUri(uri, addedNames);
  if (!(url instanceof URL)) return url;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)) && !PRIVATE_USE_SCHEME.test(url.protocol)) {
    return problem('must use https, http on a loopback host, or an app\'s own scheme named by a reverse domain (com.example.app:/callback)', 'uriScheme');
  }
  return notWrittenAsSent(uri, url);
}

/** Why a redirect URI cannot be registered (`redirectProblem`), or `undefined` when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  return redirectProblem(uri)?.message;
}

/** RFC 8252 7.3: the loopback IP literals whose redirect URIs match on any port (not `localhost`, 8.3). */
const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

/**
 * A loopback URI with its port taken out, or `undefined` for any other URI, or a port no socket
 * can have (past 65535). The rest, its scheme as written included, is compared as sent: the port
 * alone may differ (RFC 8252 7.3); the scheme is http in either case (RFC 3986 3.1), so an app
 * stored as "HTTP://127.0.0.1/cb" before registration asked for lower case still matches on any
 * port. A `requested` URI's port must also be one a browser goes to as written (`canonicalPort`:
 * not 0, no leading zeros); a registered one's is ignored whatever it is, so an app registered
 * with `:0` before registration refused it still signs in.
 */
function withoutLoopbackPort(uri: string, side: 'requested' | 'registered'): string | undefined {
  const authority = writtenAuthority(uri);
  if (authority === undefined || authority.scheme.toLowerCase() !== 'http' || authority.userinfo !== undefined || !LOOPBACK_IPS.has(authority.host)) return undefined;
  const { scheme, host, port, rest } = authority;
  // Digits a socket's port can be, then a path, a query or nothing (a fragment or a backslash: no match).
  if ((port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) <= 65535)) || !/^(?:[/?]|$)/.test(rest)) return undefined;
  if (side === 'requested' && !canonicalPort(port)) return undefined;
  return `${scheme}://${host}${rest}`;
}

/**
 * Whether a request to `redirectUri` comes from a native app (RFC 8252): a public client sent
 * back to a loopback address or to its own private-use scheme. Any app on the device can claim
 * those, so such a request is asked for consent every time (RFC 8252 8.6).
 */
export function isNativeAppRedirect(client: Pick<Client, 'type'>, redirectUri: string): boolean {
  if (client.type !== 'public') return false;
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return false;
  }
  // The parsed host, so every spelling of a loopback address counts (127.1, [0:0:0:0:0:0:0:1]).
  return (url.protocol === 'http:' && isLoopbackHost(url.hostname)) || PRIVATE_USE_SCHEME.test(url.protocol);
}

/** Addresses of a local network (RFC 1918, RFC 6598, link-local, RFC 4193). */
const LOCAL_NETWORK = (() => {
  const list = new BlockList();
  for (const [address, prefix] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['169.254.0.0', 16]] as const) list.addSubnet(address, prefix, 'ipv4');
  for (const [address, prefix] of [['fc00::', 7], ['fe80::', 10]] as const) list.addSubnet(address, prefix, 'ipv6');
  return list;
})();

/**
 * Whether an answer sent to `redirectUri` stays on the member's device or local network: a
 * loopback host, a local network address, or an app's own scheme. Any program there may be
 * listening, so the consent page warns when an app no one reviewed sends its answer there.
 */
export function redirectsToDeviceOrLocalNetwork(redirectUri: string): boolean {
  const url = new URL(redirectUri);
  if (!isWebUrl(url)) return true;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(host);
  return isLoopbackHost(url.hostname) || url.hostname.endsWith('.localhost') || (family !== 0 && LOCAL_NETWORK.check(host, family === 4 ? 'ipv4' : 'ipv6'));
}

/** A host name as `URL` gives it (IPv4 normalised, IPv6 in brackets and compressed) that names this machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Whether `url` is an http or https address, which a browser can open or post a form to. */
export function isWebUrl(url: URL): boolean {
  return url.protocol === 'https:' || url.protocol === 'http:';
}

/**
 * Where the consent page says the answer goes: the host of an http or https URI, or the app a
 * private-use scheme names. Such a URI may be written with an authority
 * (`com.example.app://bank.example/cb`), but whatever host it names, the answer goes to the app
 * that claims the scheme (RFC 8252 7.1), so the page never names that host.
 */
export function redirectTarget(redirectUri: string): { host: string } | { appScheme: string } {
  const url = new URL(redirectUri);
  return isWebUrl(url) ? { host: url.host } : { appScheme: url.protocol.slice(0, -1) };
}

/**
 * `redirectTarget` of an address as stored, which an address saved before a rule of `registeredUri`
 * may write otherwise than a browser reads it ("https://evil.example\@trusted.example/cb" goes to
 * evil.example); `undefined` for one no URL parser reads.
 */
export function storedTarget(uri: string): ReturnType<typeof redirectTarget> | undefined {
  try {
    return redirectTarget(uri);
  } catch {
    return undefined;
  }
}

/**
 * Whether `requested` is one of the client's redirect URIs: exact string comparison, no
 * normalisation (RFC 9700 2.1), except that any port matches a loopback IP URI (RFC 8252 7.3).
 */
export function isRegisteredRedirectUri(client: Pick<Client, 'redirectUris'>, requested: string): boolean {
  if (client.redirectUris.includes(requested)) return true;
  const requestedLoopback = withoutLoopbackPort(requested, 'requested');
  return requestedLoopback !== undefined &&
    client.redirectUris.some((registered) => withoutLoopbackPort(registered, 'registered') === requestedLoopback);
}

/** At most this many redirect URIs, and as many post-logout redirect URIs, per client. */
const MAX_URIS = 10;

/**
 * How many characters of a refused address its refusal quotes: enough to find it by in a list.
 * Quoted whole, a 10,000-character one filled some two dozen phone screens, twice (in the page's
 * summary of errors and beside its field).
 */
const QUOTED_URI_MAX = 200;

/**
 * `value`, a refused address or a part of one (its host, its path, the spelling to write instead),
 * in printable ASCII (`percentEncodeNonAscii`), so that no direction override or control character
 * in it reorders or hides the words around it on a page (CVE-2021-42574), a look-alike letter
 * shows as what it is, and RFC 6749's `error_description` (5.2: printable ASCII) carries it as
 * written; cut to `QUOTED_URI_MAX` characters, never within a `%XX`.
 */
function printableCut(value: string): { kept: string; cut: boolean } {
  // A quote and a backslash too: quoted as JSON, the English message then escapes nothing, and
  // what reads between its quotes is what to copy.
  const printable = percentEncodeNonAscii(value).replace(/["\\]/g, (character) => (character === '"' ? '%22' : '%5C'));
  if (printable.length <= QUOTED_URI_MAX) return { kept: printable, cut: false };
  return { kept: printable.slice(0, QUOTED_URI_MAX).replace(/%[0-9A-Fa-f]?$/, ''), cut: true };
}

/**
 * `value` as a refusal quotes it (`printableCut`): on a page, bare (the catalog's words quote it)
 * with "…" where it was cut, which no accepted address holds; in the English message, which the
 * API, `error_description` and the command line carry, in quotes with the cut said after them, so
 * that what is copied from between the quotes is no address the rules accept in its stead
 * (`https://app.example/cb...` is one).
 */
function quotedBoth(value: string): { message: string; words: string } {
  const { kept, cut } = printableCut(value);
  return {
    message: cut ? `${JSON.stringify(kept)} (its first ${QUOTED_URI_MAX} characters)` : JSON.stringify(kept),
    words: cut ? `${kept}…` : kept,
  };
}

/** `field`'s address `uri` has `problem`: its English message for the API and the command line, its words for the pages. */
function uriProblem(field: string, what: string, uri: string, { message, words }: UriProblem): InputError {
  const quoted = quotedBoth(uri);
  return InputError.worded(field, `${what} ${quoted.message} ${message}`, { key: words.key, values: { ...words.values, uri: quoted.words } });
}

/**
 * How a refusal names an address: `quoted` (the API, the pages, the command line, where whoever
 * sent it reads it), or `by place` in its list (`redirect_uris[1]`) and nothing taken from it
 * (`UriProblem.general`), where a page of this site tells it to anyone a client ID metadata
 * document's author sends there.
 */
export type UriNaming = 'quoted' | 'by place';

/**
 * The addresses a list holds, each checked unless the app holds it already (`stored`): one saved
 * before a rule was made stricter (":443", a scheme in capitals) is saved again as it is, as
 * `checkClientDetails` keeps a stored name, or its owner could save no other change to the list.
 * A new or edited line passes today's rules.
 */
function checkUriList(uris: string[], field: string, what: string, required: boolean, addedNames: readonly string[], naming: UriNaming, stored: readonly string[]): string[] {
  const unique = [...new Set(uris.map((u) => u.trim()).filter((u) => u !== ''))];
  if (required && unique.length === 0) throw InputError.worded(field, `at least one ${what} is required`, { key: 'apps.urisRequired' });
  if (unique.length > MAX_URIS) throw InputError.worded(field, `at most ${MAX_URIS} ${what}s`, { key: 'apps.urisAtMost', values: { max: MAX_URIS } });
  // Every refused address is named, not the first alone: the list is mended in one go.
  checkAll(...unique.filter((uri) => !stored.includes(uri)).map((uri) => () => {
    const found = redirectProblem(uri, addedNames);
    if (!found) return;
    if (naming === 'quoted') throw uriProblem(field, what, uri, found);
    throw new InputError(field, `${field}[${uris.findIndex((u) => u.trim() === uri)}] ${found.general}`);
  }));
  return unique;
}

/** Redirect URIs by `redirectProblem`'s rules; those in `stored`, the app's own, are kept as they are (`checkUriList`). */
export function checkRedirectUris(uris: string[], naming: UriNaming = 'quoted', stored: readonly string[] = []): string[] {
  return checkUriList(uris, 'redirect_uris', 'redirect URI', true, AUTHORIZATION_RESPONSE_NAMES, naming, stored);
}

/**
 * RP-Initiated Logout 1.0 section 3.1: post-logout redirect URIs follow the redirect URIs' rules
 * (INTERFACE section 3), and there may be none.
 */
export function checkPostLogoutRedirectUris(uris: string[], naming: UriNaming = 'quoted', stored: readonly string[] = []): string[] {
  return checkUriList(uris, 'post_logout_redirect_uris', 'post-logout redirect URI', false, LOGOUT_RESPONSE_NAMES, naming, stored);
}

/**
 * Whether `requested` is one of the client's post-logout redirect URIs, matched exactly as
 * redirect URIs are (`isRegisteredRedirectUri`, RP-Initiated Logout 1.0 section 3).
 */
export function isRegisteredPostLogoutRedirectUri(client: Pick<Client, 'postLogoutRedirectUris'>, requested: string): boolean {
  return isRegisteredRedirectUri({ redirectUris: client.postLogoutRedirectUris }, requested);
}

/**
 * Why a back-channel logout URI cannot be registered, or `undefined` when it can (Back-Channel
 * Logout 1.0 section 2.2: an absolute URL, port, path and query allowed, no fragment): https, or
 * http on a loopback host for development; ASCII, no credentials. Whether the address it names
 * may be reached is decided when a logout token is sent (docs/oidc.md, "Logout"). Its scheme's
 * case and a default port are the app's to write (`notWrittenAsSent` is not asked): the service
 * only sends to it, and compares it with no address an app sends.
 */
function backchannelLogoutUriProblem(uri: string): UriProblem | undefined {
  // No response: the logout token goes in the body (Back-Channel Logout 1.0 section 2.5).
  const url = registeredUri(uri, []);
  if (!(url instanceof URL)) return url;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return problem('must use https, or http on a loopback host (127.0.0.1, [::1], localhost) for development', 'backchannelScheme');
  }
  return undefined;
}

/**
 * The back-channel logout URI as given, or `null` when none was (an empty field clears it); the
 * app's own (`stored`) is kept as it is, as `checkUriList` keeps a list's.
 */
export function checkBackchannelLogoutUri(value: string | undefined | null, stored: string | null = null): string | null {
  const uri = (value ?? '').trim();
  if (uri === '') return null;
  if (uri === stored) return uri;
  const found = backchannelLogoutUriProblem(uri);
  if (found) throw uriProblem('backchannel_logout_uri', 'back-channel logout URI', uri, found);
  return uri;
}

/**
 * An http or https address as written, or '' for none. It is shown as text on the consent page,
 * where a direction override or an invisible character would change the address people read
 * (CVE-2021-42574), so it holds none, as an app's name does (`checkedText`, kind `name`).
 */
function optionalHttpUrl(field: string, value: string | undefined): string {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') return '';
  checkedText(field, trimmed, { kind: 'name', max: 2000 });
  let url: URL | undefined;
  try { url = new URL(trimmed); } catch { url = undefined; }
  if (!url || !isWebUrl(url)) {
    throw InputError.worded(field, `${field} must be an http or https URL`, { key: 'apps.httpUrl' });
  }
  // A user name before an @ reads as the host: "https://community.example%2Flogin@evil.example/"
  // shown on the consent page reads as the site and goes elsewhere (attack92).
  if (url.username || url.password) throw uriProblem(field, field, trimmed, problem('contains credentials', 'uriCredentials'));
  // The page shows the address as written, and the link goes to the host a browser reads in it: a
  // name in look-alike letters ("https://cоmmunity.example", a Cyrillic о) reads as the site and
  // goes to xn--cmmunity-…, as "https://0x7f.1" goes to 127.0.0.1 (attack122). So the host is
  // written as a browser reads it, the redirect URIs' rule (`registeredUri`: ASCII only) for the host.
  if (!writesHostAsRead(trimmed, url)) {
    const hostname = quotedBoth(url.hostname);
    throw InputError.worded(field, `${field} must write its host as a browser reads it: ${hostname.message}`,
      { key: 'apps.homepageHost', values: { uri: quotedBoth(trimmed).words, host: hostname.words } });
  }
  return trimmed;
}

/**
 * Whether `written`, parsed as `url`, names its host as a browser reads it (letter case aside):
 * its authority's host (`writtenAuthority`) is `url.hostname`, and the authority ends at `/`,
 * `?`, `#` or the end. A browser ends an http(s) authority at a backslash too, which a reader
 * does not: "https://evil.example\@community.example/" reads as community.example with a user
 * name before it, and goes to evil.example (attack127).
 */
export function writesHostAsRead(written: string, url: URL): boolean {
  const authority = writtenAuthority(written);
  return authority !== undefined && !authority.rest.startsWith('\\') && authority.host.toLowerCase() === url.hostname;
}

/**
 * An app's homepage as a page shows and links it: as written when it writes its host as a browser
 * reads it, as every homepage saved since attack122 does; else as the browser reads it (`URL.href`:
 * an international name in its xn-- form, "0x7f.1" as 127.0.0.1). A homepage saved before that rule
 * ("https://cоmmunity.example/", a Cyrillic о) is still in the database, and the consent page
 * showed it as written beside a link to xn--cmmunity-… (attack127).
 */
export function homepageAsRead(homepage: string): string {
  let url: URL;
  try { url = new URL(homepage); } catch { return homepage; }
  return writesHostAsRead(homepage, url) ? homepage : url.href;
}

/** Refuses, as a problem of `field`, a name an app may not have (`unreviewedNameRule`). */
export type NameRule = (field: string, name: string) => void;

/**
 * The rule for the name of an app nobody at the site answers for, one that registered itself
 * (RFC 7591) or that a member registered or renamed on the developer page: the consent page shows
 * that name where people decide whether to trust the app, in the site's own typeface, so it may
 * not claim the site's trust: no check mark, no word of review ("Verified", "Official", 已认证,
 * 官方) anywhere, and not the site's own name in any of `siteNames` alone or with words that make
 * it the site's own service ("Community", "Community Account Security", "社区账号"; not "Community
 * Garden Planner", "Communityhub", "社区团购") (`trustClaimCheck`), however it is spelt (RFC 7591 2: the server may reject any metadata value the client asks for; 5: a name is
 * the client's own claim). The operator's apps, and a name staff verified, are free of it.
 */
export async function unreviewedNameRule(siteNames: readonly string[]): Promise<NameRule> {
  const claims = await trustClaimCheck();
  return (field, name) => {
    if (claims(name, siteNames).length === 0) return;
    throw InputError.worded(field, `${field} must not claim this site's trust: no check mark, no word such as Verified or Official, and not the site's own name alone or with words that make it the site's own service`,
      { key: 'apps.nameClaimsTrust' });
  };
}

/** The characters an app's name may have. */
export const APP_NAME_MAX = 80;

/**
 * An app's name, description and homepage as it may hold them, at registration and after (the
 * registration form's rules, INTERFACE section 3): every field checked, so a form names all that
 * are wrong at once. A name or description the app has (`stored`) is saved again as it is: staff
 * or the operator may have given it, or a rule made stricter since it was saved (more than 4
 * marks on one letter, where 8 were allowed) would refuse every form its owner sends after.
 */
export function checkClientDetails(details: { name: string; description?: string | undefined; homepageUrl?: string | undefined }, nameRule?: NameRule,
  stored?: Pick<ClientDetails, 'name' | 'description'>): ClientDetails {
  const [name, description, homepageUrl] = checkAll(
    () => {
      if (stored !== undefined && details.name.trim() === stored.name) return stored.name;
      const name = checkedText('name', details.name, { kind: 'name', max: APP_NAME_MAX });
      nameRule?.('name', name);
      return name;
    },
    () => stored !== undefined && (details.description ?? '').trim() === stored.description ? stored.description
      : checkedText('description', details.description ?? '', { kind: 'paragraph', max: 500, min: 0 }),
    () => optionalHttpUrl('homepage', details.homepageUrl),
  );
  return { name, description, homepageUrl };
}

export type ClientRegistration = {
  name: string;
  type: ClientType;
  redirectUris: string[];
  homepageUrl?: string;
  description?: string;
  idTokenAlg?: IdTokenAlg;
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
  /** RFC 9126 5: only pushed authorization requests are accepted for it. */
  requirePushedAuthorizationRequests?: boolean;
  /** The scopes it may ask for; `REGISTERED_SCOPES` unless told. */
  allowedScopes?: readonly Scope[];
  /** The rule its name must pass besides the form's (`unreviewedNameRule`, for an app nobody at the site answers for). */
  nameRule?: NameRule;
} & (
  /** `memberRegistered`: registered by its owner on the developer page, not by the operator. */
  | { ownerId?: number | null; selfRegistered?: false; memberRegistered?: boolean }
  /** RFC 7591: an app that registered itself has no owner (INTERFACE section 13). */
  | { ownerId?: null; selfRegistered: true; memberRegistered?: false }
);

function tooManyApps(): InputError {
  return InputError.worded('apps', `you have ${MAX_APPS_PER_OWNER} active applications, the most one account can register; deactivate one before registering another`,
    { key: 'apps.limitReached', values: { max: MAX_APPS_PER_OWNER } });
}

/**
 * The refusal (field `apps`) of a new app a member registers: when `ownerId` registered
 * `APP_REGISTRATIONS_PER_DAY` in the last 24 hours (asked first: deactivating one makes no room in
 * it), with how long to wait, or holds `MAX_APPS_PER_OWNER` active ones; none when it has room.
 * Inside a transaction holding the owner's row only.
 */
async function appRefusal(tx: Stores, ownerId: number, now: Instant): Promise<InputError | undefined> {
  const today = await dayLimitRefusal((since, limit) => tx.clients.memberRegisteredSince(ownerId, since, limit), APP_REGISTRATIONS_PER_DAY, now, {
    field: 'apps', key: 'apps.dailyLimitReached',
    english: `you have registered ${APP_REGISTRATIONS_PER_DAY} applications in the last 24 hours, the most one account can register in a day`,
  });
  if (today) return today;
  return await tx.clients.countActiveByOwner(ownerId) >= MAX_APPS_PER_OWNER ? tooManyApps() : undefined;
}

/**
 * A new client and, for a confidential one, its secret: shown once, stored only as a hash. One a
 * member registers (`memberRegistered`) is refused (`InputError`) when its owner has
 * `MAX_APPS_PER_OWNER` active ones or registered `APP_REGISTRATIONS_PER_DAY` in the last 24 hours.
 */
export async function registerClient(stores: Stores, clock: Clock, registration: ClientRegistration): Promise<{ client: Client; secret?: string }> {
  // Every field is checked, so the registration form names all that are wrong at once.
  const [details, , idTokenAlg, redirectUris, postLogoutRedirectUris, backchannelLogoutUri] = checkAll(
    () => checkClientDetails(registration, registration.nameRule),
    () => {
      if (registration.type !== 'confidential' && registration.type !== 'public') throw InputError.worded('type', 'type must be confidential or public', { key: 'apps.typeUnknown' });
    },
    (): IdTokenAlg => {
      const alg = registration.idTokenAlg ?? 'RS256';
      if (alg !== 'RS256' && alg !== 'ES256') throw new InputError('id_token_alg', 'id-token-alg must be RS256 or ES256');
      return alg;
    },
    () => checkRedirectUris(registration.redirectUris),
    () => checkPostLogoutRedirectUris(registration.postLogoutRedirectUris ?? []),
    () => checkBackchannelLogoutUri(registration.backchannelLogoutUri),
  );
  const secret = registration.type === 'confidential' ? generateToken('clientSecret') : undefined;
  const create = (into: Stores) => into.clients.create({
    clientId: randomBytes(16).toString('hex'),
    ...details,
    ownerId: registration.ownerId ?? null,
    type: registration.type,
    redirectUris,
    allowedScopes: [...(registration.allowedScopes ?? REGISTERED_SCOPES)],
    secretHash: secret === undefined ? null : hashSecret(secret),
    idTokenAlg,
    postLogoutRedirectUris,
    backchannelLogoutUri,
    requirePushedAuthorizationRequests: registration.requirePushedAuthorizationRequests ?? false,
    selfRegistered: registration.selfRegistered ?? false,
    memberRegistered: registration.memberRegistered ?? false,
  }, clock.now());
  const ownerId = registration.ownerId;
  // An app with no owner (one that registered itself) is one insert.
  const client = ownerId === undefined || ownerId === null ? await create(stores) : await stores.transaction(async (tx) => {
    // An app's owner manages it at /settings/developers: an account that is not active gets none.
    // A member's apps are counted holding its row: two racing at the cap or the day's last place
    // cannot both land (the second waits for the first and counts its app).
    await requireActiveAccount(tx, ownerId, 'own a new app');
    const refusal = registration.memberRegistered === true ? await appRefusal(tx, ownerId, clock.now()) : undefined;
    if (refusal) throw refusal;
    return create(tx);
  });
  return secret === undefined ? { client } : { client, secret };
}

/**
 * A new secret for a confidential client. By default (`keepPreviousHours` 0) the one it replaces
 * fails at once (INTERFACE section 2, seed table 7.1: a rotated secret is `invalid_client`); an
 * operator may keep it working for `keepPreviousHours` (PREVIOUS_CLIENT_SECRET_HOURS). Either way
 * a previous secret older than the one replaced stops at once. `undefined` when the client is not
 * an active confidential one (or no longer exists), and nothing was written.
 */
export async function rotateClientSecret(stores: Stores, clock: Clock, clientId: string, keepPreviousHours: number): Promise<string | undefined> {
  const secret = generateToken('clientSecret');
  const now = clock.now();
  const previousExpiresAt = keepPreviousHours > 0 ? now + keepPreviousHours * 3_600_000 : null;
  return (await stores.clients.rotateSecret(clientId, hashSecret(secret), previousExpiresAt, now)) ? secret : undefined;
}

/** The previous secret while it is still accepted at `now`, else `null`. */
export function livePreviousSecret(client: Client, now: Instant): Client['previousSecret'] {
  return client.previousSecret !== null && !hasExpired(client.previousSecret.expiresAt, now) ? client.previousSecret : null;
}

/** Ends an active client's previous secret before its time; says whether one was still accepted. */
export async function deletePreviousClientSecret(stores: Stores, clock: Clock, clientId: string): Promise<boolean> {
  return stores.clients.deletePreviousSecret(clientId, clock.now());
}

/** Deactivates a client and ends every grant (so every token) it holds, in one transaction. */
export async function deactivateClient(stores: Stores, clock: Clock, clientId: string): Promise<Client | undefined> {
  return stores.transaction(async (tx) => {
    const now = clock.now();
    const client = await tx.clients.setStatus(clientId, 'deactivated', now);
    if (client) await tx.grants.revokeForClient(clientId, 'client_deactivated', now);
    return client;
  });
}

/**
 * Whether making `client` active again would take its owner past `MAX_APPS_PER_OWNER`: it is
 * deactivated, a member registered it (the cap its registration was held to), and the owner has
 * that many active. Decides only inside `reactivateClient`; read before it, it lets a form say so
 * before it asks for anything more.
 */
export async function reactivationOverCap(stores: Stores, client: Client): Promise<boolean> {
  return client.status === 'deactivated' && client.ownerId !== null && client.memberRegistered
    && await stores.clients.countActiveByOwner(client.ownerId) >= MAX_APPS_PER_OWNER;
}

/**
 * Makes a client active again; nothing that ended comes back. Refused (`owner_full`, nothing
 * written) when that would take its owner past `MAX_APPS_PER_OWNER` (`reactivationOverCap`),
 * counted holding the owner's row as a registration does, so a reactivation and a registration (or
 * another reactivation) racing for the last place cannot both land. `undefined` when there is no
 * such client.
 */
export async function reactivateClient(stores: Stores, clock: Clock, clientId: string): Promise<Client | 'owner_full' | undefined> {
  return stores.transaction(async (tx) => {
    const ownerId = (await tx.clients.findById(clientId))?.ownerId;
    // Held whatever the owner's status (staff may reactivate a suspended member's app); a deleted
    // owner's row is not, and nothing registers for a deleted account to race with.
    if (ownerId !== undefined && ownerId !== null) await tx.users.holdUnlessDeleted(ownerId);
    // Read once held: a reactivation of the same app that went first has made it active.
    const client = await tx.clients.findById(clientId);
    if (!client) return undefined;
    if (await reactivationOverCap(tx, client)) return 'owner_full';
    return tx.clients.setStatus(clientId, 'active', clock.now());
  });
}

/** The client when `ownerId` owns it; `undefined` otherwise, so another owner's app looks absent. */
export async function findOwnedClient(stores: Stores, ownerId: number, clientId: string): Promise<Client | undefined> {
  const client = await findClient(stores, clientId);
  return client && client.ownerId === ownerId ? client : undefined;
}

/**
 * New redirect URIs for an active client, by the same rules as at registration, from its owner
 * on the developer page: new ones are the member's claim, which ends a staff verification; those
 * the client has are kept as they are (`checkUriList`). The URIs saved; `undefined` when the
 * client is no longer active (or no longer exists).
 */
export async function updateRedirectUris(stores: Stores, clock: Clock, client: Pick<Client, 'clientId' | 'redirectUris'>, uris: string[]): Promise<string[] | undefined> {
  const redirectUris = checkRedirectUris(uris, 'quoted', client.redirectUris);
  return (await stores.clients.setRedirectUris(client.clientId, redirectUris, clock.now(), 'owner')) ? redirectUris : undefined;
}

/**
 * A new name, description and homepage for an active client, by the same rules as at
 * registration, from its owner on the developer page: details other than stored end a staff
 * verification, which vouched for those it saw, in the same write (`ClientStore.setDetails`), so
 * the name passes `nameRule` (`unreviewedNameRule`) unless it is the name the app has, which a
 * staff verification or the operator may have given it (`checkClientDetails` keeps what is stored).
 * The details saved; `undefined` when the client is no longer active (or no longer exists).
 */
export async function updateClientDetails(stores: Stores, clock: Clock, client: Pick<Client, 'clientId' | 'name' | 'description'>, details: { name: string; description: string; homepageUrl: string }, nameRule: NameRule): Promise<ClientDetails | undefined> {
  const clientId = client.clientId;
  const checked = checkClientDetails(details, nameRule, client);
  return (await stores.clients.setDetails(clientId, checked, clock.now(), 'owner')) ? checked : undefined;
}

/**
 * New post-logout redirect URIs and back-channel logout URI for an active client, by the same
 * rules as at registration, from its owner as `updateRedirectUris` (those it has kept as they
 * are); both are replaced together
 * (an empty back-channel URI removes it). The URIs saved; `undefined` when the client is no longer
 * active (or no longer exists).
 */
export async function updateLogoutUris(stores: Stores, clock: Clock, client: Pick<Client, 'clientId' | 'postLogoutRedirectUris' | 'backchannelLogoutUri'>,
  uris: { postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null | undefined }): Promise<{ postLogoutRedirectUris: string[]; backchannelLogoutUri: string | null } | undefined> {
  const [postLogoutRedirectUris, backchannelLogoutUri] = checkAll(
    () => checkPostLogoutRedirectUris(uris.postLogoutRedirectUris, 'quoted', client.postLogoutRedirectUris),
    () => checkBackchannelLogoutUri(uris.backchannelLogoutUri, client.backchannelLogoutUri),
  );
  const checked = { postLogoutRedirectUris, backchannelLogoutUri };
  return (await stores.clients.setLogoutUris(client.clientId, checked, clock.now(), 'owner')) ? checked : undefined;
}

/**
 * RFC 9126 5: whether the client's authorization requests must be pushed; from the next
 * authorization request on, for an active client. Returns whether it was written: `false` when
 * the client is not active (or does not exist).
 */
export async function setRequirePushedRequests(stores: Stores, clock: Clock, clientId: string, required: boolean): Promise<boolean> {
  return stores.clients.setRequirePushedAuthorizationRequests(clientId, required, clock.now());
}
