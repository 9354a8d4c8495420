/**
 * The service's settings (INTERFACE section 8), read from the environment once at start.
 * Every other module receives a frozen `Settings`; nothing else reads `process.env`.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { type ScanningKey, isP256PublicKey } from '../core/credentials/secret-scanning.js';
import { REFRESH_REPLAY_MAX_SECONDS } from '../core/oauth/tokens/replay.js';
import { LOCALES, type Locale } from '../core/locales.js';
import { type SiteNames, labelName } from '../core/site-name.js';
import { DEFAULT_SITE_TIME_ZONE, isTimeZone } from '../core/site-time.js';
import { quoted } from '../core/text.js';

export type DatabaseTarget =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string };

export interface Settings {
  readonly port: number;
  readonly host: string;
  /** Issuer and root of every absolute URL, without a trailing slash. */
  readonly baseUrl: string;
  /** SITE_TIME_ZONE: the IANA zone pages show times in for a viewer who chose none (INTERFACE section 12). */
  readonly siteTimeZone: string;
  /** SITE_NAME and SITE_NAME_<LANGUAGE>: the site's name in each language that has one set; else the catalogs' ("Community", 社区, 社群). */
  readonly siteNames: SiteNames;
  readonly database: DatabaseTarget;
  readonly redisUrl: string | undefined;
  /** Seed the demo data when the database is new. */
  readonly demo: boolean;
  readonly rateLimitPerMinute: number;
  /** Accounts one address may create in an hour (a class or an office behind one NAT signs up together). */
  readonly signUpsPerHour: number;
  /** Failed authentications of one client one address may make in 10 minutes (`core/oauth/endpoint-limits.ts`). */
  readonly clientAuthFailuresPerAddress: number;
  /** Clients one address may fail to authenticate in 10 minutes before it is refused for every client. */
  readonly clientAuthClientsPerAddress: number;
  /** Failed authentications of one client in 10 minutes before each failing address is refused for it. */
  readonly clientAuthFailuresPerClient: number;
  /** Pushed authorization requests one client may make in a minute (RFC 9126). */
  readonly pushesPerMinutePerClient: number;
  /** Pushed authorization requests of public clients from one address in a minute. */
  readonly pushesPerMinutePerAddress: number;
  /** Apps one address may register at /api/oauth/register in an hour (RFC 7591, INTERFACE section 13). */
  readonly registrationsPerHourPerAddress: number;
  readonly accessTokenTtlSeconds: number;
  readonly codeTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  /**
   * How long a rotated refresh token, presented again by its client while its successor is unused,
   * gets the same successor answer again (INTERFACE section 11); 0 turns the window off.
   */
  readonly refreshReplaySeconds: number;
  /**
   * Hours the secret a rotation replaced keeps authenticating its client; 0 (the default): it
   * fails at once, as INTERFACE section 2 and seed table 7.1 say.
   */
  readonly previousClientSecretHours: number;
  readonly keysSecret: string | undefined;
  /** How long a rotated signing key is published before it signs (INTERFACE section 5). */
  readonly signingKeyActivationSeconds: number;
  readonly logLevel: string;
  /**
   * Which X-Forwarded-For hops to believe: `false` none; a number of proxies in front (the
   * client is the entry that many hops back); or the proxies' addresses and CIDR ranges.
   */
  readonly trustProxy: TrustProxy;
  /** Worker processes sharing the port (Node cluster); 1 runs in this process alone. */
  readonly workers: number;
  /** Seconds between janitor sweeps in the server; 0 turns the sweep off. */
  readonly janitorIntervalSeconds: number;
  /** Where `/metrics` is served, on `host`, apart from the public port; `undefined`: nowhere. */
  readonly metricsPort: number | undefined;
  /** Where OpenTelemetry traces go (OTEL_EXPORTER_OTLP_*), `undefined`: no traces. */
  readonly otlpTraces: OtlpTraces | undefined;
  /** Seconds between this instance's looks for back-channel logouts to deliver; 0: it delivers none. */
  readonly logoutDeliveryIntervalSeconds: number;
  /**
   * Whether logout tokens may go to private, loopback and other non-public addresses. Apps
   * register the addresses, so by default only a service that itself runs on http on a loopback
   * address (development) sends there.
   */
  readonly backchannelAllowPrivate: boolean;
  /**
   * Client ID metadata documents (INTERFACE section 13): whether a URL client_id names an app
   * (CLIENT_ID_METADATA_DOCUMENTS), whether its document may be fetched from a private or
   * loopback address, or over http from a loopback host (CLIENT_METADATA_ALLOW_PRIVATE, on by
   * default only for development), and the hosts it may come from (CLIENT_METADATA_HOSTS;
   * `undefined`: any).
   */
  readonly clientMetadata: { readonly enabled: boolean; readonly allowPrivate: boolean; readonly hosts: readonly string[] | undefined };
  /**
   * The public keys secret-scanning alerts are signed with (SECRET_SCANNING_KEYS); empty: the
   * alert endpoint answers 404.
   */
  readonly secretScanningKeys: readonly ScanningKey[];
  readonly mail: MailTransportSetting;
  /** The From of every mail: `Name <address>` or an address. */
  readonly mailFrom: string;
  /** Seconds between this instance's looks for mail to send; 0: it sends none. */
  readonly mailDeliveryIntervalSeconds: number;
  /** DYNAMIC_REGISTRATION: whether apps may register themselves at /api/oauth/register (RFC 7591, INTERFACE section 13). */
  readonly dynamicRegistration: boolean;
  /** APPEAL_CONTACT: where a member who is not active appeals, an https URL or a mailto: address, which the sign-in page links to; `undefined`: no link. */
  readonly appealContact: string | undefined;
}

export type TrustProxy = false | number | readonly string[];

/**
 * Where mail goes (INTERFACE section 12): an SMTP server; `.eml` files in a folder on a
 * developer's machine (a loopback BASE_URL without SMTP_URL); or nowhere, and the e-mail pages
 * say the site has no mail set up.
 */
export type MailTransportSetting =
  | { readonly kind: 'smtp'; readonly url: string }
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'off' };

/** Where a developer's machine keeps its mail without SMTP_URL. */
export const MAIL_FILES_DIRECTORY = './data/mail';

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

/**
 * The longest PREVIOUS_CLIENT_SECRET_HOURS: a week, long enough to deploy a new client secret
 * everywhere without downtime (GitHub keeps an OAuth app's old secret until it is deleted; an
 * operator who turns this on gets one that also ends by itself).
 */
export const PREVIOUS_CLIENT_SECRET_MAX_HOURS = 7 * 24;

type Env = Record<string, string | undefined>;

/** What starts a URL: its scheme and slashes, after anything a parser would refuse (a quote, a blank). */
const URL_START = /^[^a-z/]*[a-z][a-z\d+.-]*:\/+/i;

/** An `@` as a URL parser or a reader may take one: percent-encoded, or a look-alike (＠ U+FF20, ﹫ U+FE6B). */
const AT = /@|%40|\uff20|\ufe6b/gi;

/** A `:` as a URL parser or a reader may take one: percent-encoded, or a look-alike (： U+FF1A, ﹕ U+FE55). */
const COLON = /:|%3a|\uff1a|\ufe55/i;

/**
 * A setting's value as its refusal shows it, quoted: the one line a bad setting prints goes to the
 * journal, and must never hold a password, whichever setting it names and however mistyped. A value
 * with a `:` before its last `@` (either percent-encoded or a look-alike) is shown with everything
 * between its scheme and slashes, if it has them, and that `@` replaced: the user and password,
 * even a password with `/`, `#` or `@` not percent-encoded, in a URL the parsers refuse
 * (`postgres:user:pw@`, `redis//:pw@`, `user:pw@host`, one in quotes). Whatever follows a `?`, a
 * `#`, a `&` or a `;` is cut too: ioredis (`?password=`, `?sentinelPassword=`) and node-postgres
 * (`?password=`) take a password from the query, which a mistyped value starts otherwise
 * (`/0&password=`, `;password=` as a JDBC URL has it).
 */
function shownSetting(value: string): string {
  const start = URL_START.exec(value)?.[0] ?? '';
  // The last match, by a loop: spread into Math.max, 128 KiB of `@` (one env value's limit) overflowed the stack.
  let at = -1;
  for (const match of value.matchAll(AT)) at = match.index;
  const hidden = at > start.length && COLON.test(value.slice(0, at)) ? `${start}…${value.slice(at)}` : value;
  return quoted(hidden.replace(/([?#&;])[^]*$/, '$1…'));
}

/** One setting's parser: returns the value or throws with what the setting accepts. */
function invalid(name: string, value: string, accepts: string): never {
  throw new SettingsError(`invalid setting ${name}=${shownSetting(value)}: accepts ${accepts}`);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    invalid(name, raw, `an integer from ${min} to ${max}`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  return invalid(name, raw, '1 or 0 (or true, false)');
}

/** A feature switched `on` or `off` (INTERFACE section 13's settings). */
function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  return invalid(name, raw, 'on or off');
}

/** A host name, or `*.` and a domain for every host under it. */
const HOST_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function clientMetadataHosts(env: Env): readonly string[] | undefined {
  const raw = env.CLIENT_METADATA_HOSTS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase());
  for (const host of hosts) {
    if (!HOST_PATTERN.test(host) || host.length > 253) invalid('CLIENT_METADATA_HOSTS', raw, 'a comma-separated list of host names (app.example) and *.domain patterns (*.example.com)');
  }
  return Object.freeze(hosts);
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid(name, raw, 'an absolute http:// or https:// URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    invalid(name, raw, 'an absolute http:// or https:// URL without query, fragment or credentials');
  }
  return url.href.replace(/\/+$/, '');
}

export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

export interface OtlpTraces {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT, the base the SDK adds `/v1/traces` to. */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
}

const OTLP_PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json', 'grpc'];

/**
 * Traces are on when an OTLP endpoint is set, as the OpenTelemetry specification names it
 * (docs/operations.md, "Traces"), and OTEL_SDK_DISABLED is not `true`. Its URL and the protocol
 * are checked with the other settings, so a typo stops the start before anything is built; the
 * SDK reads them, and the other OTEL_* variables, itself. Loads no OpenTelemetry module:
 * src/main.ts asks before it loads any.
 */
export function otlpTraces(env: Env): OtlpTraces | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const endpointName = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const endpoint = env[endpointName]?.trim();
  if (!endpoint) return undefined;
  httpUrl(endpointName, endpoint);
  const protocolName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolName]?.trim() || 'http/protobuf';
  if (!OTLP_PROTOCOLS.includes(protocol)) invalid(protocolName, protocol, OTLP_PROTOCOLS.join(', '));
  return { endpoint, protocol: protocol as OtlpProtocol };
}

/** A DATABASE_URL that names PostgreSQL; anything else valid is SQLite. */
export function namesPostgres(raw: string | undefined): boolean {
  return raw !== undefined && /^postgres(ql)?:\/\/.+/.test(raw);
}

function database(env: Env): DatabaseTarget {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return { kind: 'sqlite', path: './data/svc.sqlite' };
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) {
    return { kind: 'sqlite', path: raw.slice('sqlite:'.length) };
  }
  if (namesPostgres(raw)) return { kind: 'postgres', url: raw };
  return invalid('DATABASE_URL', raw, 'sqlite:PATH or postgres://…');
}

function redis(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (raw === undefined || raw === '') return undefined;
  const accepts = 'redis://… or rediss://…, with a database number after the port when one is given (redis://host:6379/2)';
  // Sentinel's own URLs (ioredis's `sentinels` option, other clients' `redis-sentinel://`): the
  // service asks no Sentinel, and would read one as a Redis (docs/operations.md, "Metrics and alerts").
  if (/^(?:redis-)?sentinels?:\/\//i.test(raw)) {
    throw new SettingsError(`invalid setting REDIS_URL=${shownSetting(raw)}: the service does not ask Redis Sentinel where the primary is; set REDIS_URL to the primary itself, redis://HOST:PORT or rediss://…, by an address a failover moves to the new primary (a DNS name, a proxy)`);
  }
  if (!/^rediss?:\/\/.+/.test(raw)) invalid('REDIS_URL', raw, accepts);
  // The path is the database (0 when none): the one way to keep two deployments apart in one Redis.
  let path: string;
  try {
    path = new URL(raw).pathname;
  } catch {
    return invalid('REDIS_URL', raw, accepts);
  }
  if (!/^(\/(\d{1,5})?)?$/.test(path)) invalid('REDIS_URL', raw, accepts);
  return raw;
}

/**
 * HOST: an IP address, or a host name (RFC 1123 2.1: letters, digits and hyphens in dot-separated
 * labels, the last not all digits, so a mistyped address like 999.1.1.1 is no name). Whether this
 * machine has it is known only when the server listens.
 */
function hostSetting(env: Env): string {
  const raw = env.HOST || '127.0.0.1';
  const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  const name = new RegExp(`^(?:${label}\\.)*${label}\\.?$`);
  if (isIP(raw) === 0 && !(raw.length <= 253 && name.test(raw) && !/(^|\.)\d+\.?$/.test(raw))) {
    invalid('HOST', raw, 'an IP address of this machine (127.0.0.1, 0.0.0.0, ::) or a host name');
  }
  return raw;
}

/** One proxy address or CIDR range, as Fastify's `trustProxy` (proxy-addr) takes it. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address ?? '');
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  // A /0 trusts every address: every hop, which the setting never means.
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * INTERFACE section 8: a hop count or a list of proxies, never every hop, since then a client
 * picks its own address by sending X-Forwarded-For and every per-address limit falls.
 */
function trustProxy(env: Env): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  const accepts = 'the number of proxies in front (0 for none) or a comma list of proxy addresses and CIDR ranges';
  if (raw === '' || raw === '0') return false;
  if (/^\d+$/.test(raw)) return Number(raw) <= 16 ? Number(raw) : invalid('TRUST_PROXY', raw, accepts);
  const entries = raw.split(',').map((e) => e.trim());
  if (!entries.every(isAddressOrRange)) invalid('TRUST_PROXY', raw, accepts);
  return Object.freeze(entries);
}

/**
 * SECRET_SCANNING_KEYS: the path of a JSON file, or the JSON itself, in the shape of GitHub's
 * https://api.github.com/meta/public_keys/secret_scanning: `{"public_keys": [{"key_identifier",
 * "key"}]}`, each `key` the PEM of a P-256 public key.
 */
function secretScanningKeys(env: Env): readonly ScanningKey[] {
  const raw = (env.SECRET_SCANNING_KEYS ?? '').trim();
  if (raw === '') return Object.freeze([]);
  const accepts = 'a JSON file path, or JSON, {"public_keys": [{"key_identifier": "…", "key": "-----BEGIN PUBLIC KEY-----…"}]} with P-256 keys';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.startsWith('{') ? raw : readFileSync(raw, 'utf8'));
  } catch {
    return invalid('SECRET_SCANNING_KEYS', raw.startsWith('{') ? '…' : raw, accepts);
  }
  const list = (parsed as { public_keys?: unknown } | null)?.public_keys;
  const keys = Array.isArray(list) ? list.map((k: { key_identifier?: unknown; key?: unknown } | null) => ({ id: k?.key_identifier, pem: k?.key })) : [];
  if (keys.length === 0 || !keys.every((k) => typeof k.id === 'string' && k.id !== '' && typeof k.pem === 'string' && isP256PublicKey(k.pem))) {
    invalid('SECRET_SCANNING_KEYS', raw.startsWith('{') ? '…' : raw, accepts);
  }
  return Object.freeze(keys.map((k) => Object.freeze({ id: k.id as string, pem: k.pem as string })));
}

/** METRICS_PORT: another port than PORT, or the second server to listen there fails the start. */
function metricsPort(env: Env, port: number): number | undefined {
  if (!env.METRICS_PORT) return undefined;
  const value = integer(env, 'METRICS_PORT', 0, 1, 65535);
  if (value === port) invalid('METRICS_PORT', env.METRICS_PORT, `a port other than PORT (${port}), where the public server listens`);
  return value;
}

/**
 * SMTP_URL: `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start),
 * optionally `user:pass@`, a host and a port; nothing after them. Unset: `.eml` files on a
 * loopback BASE_URL, else no mail.
 */
function mailTransport(env: Env, baseUrl: string): MailTransportSetting {
  const raw = env.SMTP_URL;
  if (raw === undefined || raw === '') {
    return isLoopbackBaseUrl(baseUrl) ? { kind: 'files', directory: MAIL_FILES_DIRECTORY } : { kind: 'off' };
  }
  const accepts = 'smtp://[user:pass@]host[:port] or smtps://[user:pass@]host[:port]';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('SMTP_URL', raw, accepts);
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '' || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    invalid('SMTP_URL', raw, accepts);
  }
  return { kind: 'smtp', url: raw };
}

/** Longest site name, in characters: a page title, a mail's sender and an authenticator's label hold it. */
const SITE_NAME_MAX = 60;

/**
 * SITE_NAME names the site in every language; SITE_NAME_EN, SITE_NAME_ZH_CN and SITE_NAME_ZH_TW in
 * one (a community called 河畔 in Chinese and Riverside in English). No control or format
 * characters: the name stands beside the app's in a consent page and in a mail's header, where a
 * right-to-left override would make it read as something else. No colon: an authenticator app
 * reads the issuer up to the first one in `Issuer:account` (Key URI Format).
 */
function siteNames(env: Env): SiteNames {
  const named = (name: string): string | undefined => {
    const raw = env[name]?.normalize('NFC').trim();
    if (raw === undefined || raw === '') return undefined;
    if ([...raw].length > SITE_NAME_MAX || /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}<>":]/u.test(raw)) {
      invalid(name, raw, `a name of up to ${SITE_NAME_MAX} characters, without control characters, < > " or :`);
    }
    return raw;
  };
  const everywhere = named('SITE_NAME');
  const names: Partial<Record<Locale, string>> = {};
  for (const locale of LOCALES) {
    const name = named(`SITE_NAME_${locale.toUpperCase().replace('-', '_')}`) ?? everywhere;
    if (name !== undefined) names[locale] = name;
  }
  return Object.freeze(names);
}

/** RFC 5322 3.2.3 and 3.4: a display name holding specials (a comma, a dot) is a quoted string. */
function displayName(name: string): string {
  return /[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/[\\"]/g, '\\$&')}"` : name;
}

/** MAIL_FROM: `Name <address>` or a bare address; default `{SITE_NAME or Community} <no-reply@{host of BASE_URL}>`. */
function mailFrom(env: Env, baseUrl: string, names: SiteNames): string {
  const raw = (env.MAIL_FROM ?? '').trim();
  if (raw === '') return `${displayName(labelName(names))} <no-reply@${new URL(baseUrl).hostname}>`;
  // No line breaks: the value becomes a header. No control or invisible character either: an
  // address with a zero-width space in it reads as another's, and a DEL or NUL is no header's.
  if (!/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(raw) || /[\p{Cc}\p{Cf}]/u.test(raw)) {
    invalid('MAIL_FROM', raw, 'an address (no-reply@example.com) or a name and an address (Community <no-reply@example.com>)');
  }
  return raw;
}

/** The longest APPEAL_CONTACT: a link on a page, not a document. */
const APPEAL_CONTACT_MAX = 2000;
/**
 * `mailto:` and one address whose characters need no percent-encoding there (RFC 6068 2:
 * unreserved and the delimiters an address may hold, less those that separate recipients or
 * comment), at a host of dot-separated labels (RFC 1035 2.3.1).
 */
const MAILTO_ONE_ADDRESS = /^mailto:[a-z0-9._~!$'*+-]+@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/**
 * APPEAL_CONTACT: an https URL (a form, a help page) or `mailto:` one address, which the sign-in
 * page of a member who is not active links to. It becomes a link's `href`, so any other scheme
 * (`javascript:`, `data:`, plain http), a space or control character (which the URL parser would
 * drop silently) or credentials in it stops the start.
 */
function appealContact(env: Env): string | undefined {
  const raw = (env.APPEAL_CONTACT ?? '').trim();
  if (raw === '') return undefined;
  const accepts = 'an https:// URL (https://example.com/appeals) or mailto: and one address (mailto:staff@example.com)';
  if (raw.length > APPEAL_CONTACT_MAX || /[\s\p{Cc}\p{Cf}]/u.test(raw)) return invalid('APPEAL_CONTACT', raw, accepts);
  // One address and no headers (RFC 6068 2): nothing to add a recipient or a body with, and none
  // percent-encoded, which a mail client decodes (`%2C` another recipient, `%0A` a header line).
  if (/^mailto:/i.test(raw)) return MAILTO_ONE_ADDRESS.test(raw) ? raw : invalid('APPEAL_CONTACT', raw, accepts);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('APPEAL_CONTACT', raw, accepts);
  }
  // The length is the link's: the parser percent-encodes what was typed, up to nine times as long.
  if (url.protocol !== 'https:' || url.hostname === '' || url.username !== '' || url.password !== '' || url.href.length > APPEAL_CONTACT_MAX) {
    return invalid('APPEAL_CONTACT', raw, accepts);
  }
  return url.href;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Whether BASE_URL names a loopback host: a developer's machine. */
export function isLoopbackBaseUrl(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether BASE_URL is http on a loopback host: a developer's machine, where apps run beside us. */
function isLoopbackHttp(baseUrl: string): boolean {
  return baseUrl.startsWith('http:') && isLoopbackBaseUrl(baseUrl);
}

/** Reads and validates every setting; throws a `SettingsError` naming the first bad one. */
export function loadSettings(env: Env = process.env): Settings {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = hostSetting(env);
  // PORT=0 listens on a port the system picks, which the default BASE_URL cannot name: the
  // issuer and every link would say localhost:0.
  if (port === 0 && !env.BASE_URL) invalid('PORT', env.PORT!, 'a port from 1 to 65535 without BASE_URL (0 lets the system pick one, which the issuer could not name)');
  const baseUrl = httpUrl('BASE_URL', env.BASE_URL || `http://localhost:${port}`);
  const db = database(env);
  const keysSecret = env.KEYS_SECRET || undefined;
  if (keysSecret !== undefined && keysSecret.length < 32) {
    invalid('KEYS_SECRET', '…', 'a secret of at least 32 characters');
  }
  // The demo app lives under BASE_URL, and its redirect URIs follow every app's rules (https, or
  // http on a loopback host). Where they cannot, the demo is off by default, and asking for it is
  // refused here, before anything is created, rather than failing at its registration.
  const demoPossible = baseUrl.startsWith('https:') || isLoopbackHttp(baseUrl);
  const demo = flag(env, 'DEMO', db.kind === 'sqlite' && demoPossible);
  if (demo && !demoPossible) {
    throw new SettingsError(`invalid setting DEMO=1 with BASE_URL=${shownSetting(baseUrl)}: the demo app's redirect URIs under BASE_URL must be https or http on a loopback host, as every app's are; leave DEMO unset, or set BASE_URL to https://… or http://localhost:…`);
  }
  const siteTimeZone = env.SITE_TIME_ZONE || DEFAULT_SITE_TIME_ZONE;
  if (!isTimeZone(siteTimeZone)) invalid('SITE_TIME_ZONE', siteTimeZone, 'an IANA time zone such as Asia/Shanghai, Asia/Taipei or UTC');
  const names = siteNames(env);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) invalid('LOG_LEVEL', logLevel, LOG_LEVELS.join(', '));
  return Object.freeze({
    port,
    host,
    baseUrl,
    siteTimeZone,
    siteNames: names,
    database: Object.freeze(db),
    redisUrl: redis(env),
    demo,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 60, 1, 100_000_000),
    signUpsPerHour: integer(env, 'SIGN_UPS_PER_HOUR', 50, 1, 1_000_000),
    clientAuthFailuresPerAddress: integer(env, 'CLIENT_AUTH_FAILURES_PER_ADDRESS', 20, 1, 1_000_000),
    clientAuthClientsPerAddress: integer(env, 'CLIENT_AUTH_CLIENTS_PER_ADDRESS', 20, 1, 1_000_000),
    clientAuthFailuresPerClient: integer(env, 'CLIENT_AUTH_FAILURES_PER_CLIENT', 100, 1, 1_000_000),
    pushesPerMinutePerClient: integer(env, 'PAR_PER_MINUTE_PER_CLIENT', 600, 1, 100_000_000),
    pushesPerMinutePerAddress: integer(env, 'PAR_PER_MINUTE_PER_ADDRESS', 300, 1, 100_000_000),
    registrationsPerHourPerAddress: integer(env, 'REGISTRATIONS_PER_HOUR_PER_ADDRESS', 20, 1, 100_000_000),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL', 3600, 1, 86_400),
    codeTtlSeconds: integer(env, 'CODE_TTL', 300, 1, 600),
    refreshTokenTtlSeconds: integer(env, 'REFRESH_TOKEN_TTL', 30 * 86_400, 60, 365 * 86_400),
    refreshReplaySeconds: integer(env, 'REFRESH_REPLAY_SECONDS', 0, 0, REFRESH_REPLAY_MAX_SECONDS),
    previousClientSecretHours: integer(env, 'PREVIOUS_CLIENT_SECRET_HOURS', 0, 0, PREVIOUS_CLIENT_SECRET_MAX_HOURS),
    keysSecret,
    signingKeyActivationSeconds: integer(env, 'SIGNING_KEY_ACTIVATION_SECONDS', 120, 0, 86_400),
    logLevel,
    trustProxy: trustProxy(env),
    workers: integer(env, 'WORKERS', 1, 1, 64),
    janitorIntervalSeconds: integer(env, 'JANITOR_INTERVAL', 600, 0, 86_400),
    metricsPort: metricsPort(env, port),
    otlpTraces: otlpTraces(env),
    logoutDeliveryIntervalSeconds: integer(env, 'LOGOUT_DELIVERY_INTERVAL', 2, 0, 3600),
    backchannelAllowPrivate: flag(env, 'BACKCHANNEL_ALLOW_PRIVATE', isLoopbackHttp(baseUrl)),
    clientMetadata: Object.freeze({
      enabled: onOff(env, 'CLIENT_ID_METADATA_DOCUMENTS', true),
      allowPrivate: flag(env, 'CLIENT_METADATA_ALLOW_PRIVATE', isLoopbackHttp(baseUrl)),
      hosts: clientMetadataHosts(env),
    }),
    secretScanningKeys: secretScanningKeys(env),
    mail: Object.freeze(mailTransport(env, baseUrl)),
    mailFrom: mailFrom(env, baseUrl, names),
    mailDeliveryIntervalSeconds: integer(env, 'MAIL_DELIVERY_INTERVAL', 2, 0, 3600),
    dynamicRegistration: onOff(env, 'DYNAMIC_REGISTRATION', true),
    appealContact: appealContact(env),
  });
}
