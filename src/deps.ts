/**
 * The one place that knows the concrete classes: database and stores (through src/base-deps.ts),
 * limiter, clock, metrics, signing keys. Everything else receives `Deps` (or the part of it that
 * it needs).
 */
import { type BaseDeps, type BaseDepsOverrides, createBaseDeps, prepareDatabase } from './base-deps.js';
import type { Settings } from './config/settings.js';
import type { ImageReencoder } from './core/community/avatars.js';
import { BackgroundTasks } from './core/background.js';
import { DeviceCookies } from './core/accounts/device-cookies.js';
import { DpopNonces } from './core/oauth/dpop/nonces.js';
import { DpopVerifier } from './core/oauth/dpop/verifier.js';
import { SEND_TIMEOUT_MS } from './core/oidc/logout/delivery.js';
import { KeyRing } from './core/oidc/key-ring.js';
import { ensureSigningKeys } from './core/oidc/keys.js';
import { sealStoredSecrets } from './core/credentials/secrets-at-rest.js';
import type { DpopReplayStore } from './core/oauth/ports.js';
import type { RateLimiter } from './core/rate-limiter.js';
import type { Stores } from './core/stores.js';
import type { SecurityLog } from './core/accounts/security-log.js';
import { FigureCounter } from './core/staff/figures.js';
import { ViewCounter } from './core/community/views.js';
import { CountFlush } from './count-flush.js';
import { LogoutDeliveryWorker } from './logout-deliveries.js';
import { MailDeliveryWorker } from './mail-deliveries.js';
import { HiddenFlagsWorker } from './hidden-flags.js';
import { Mailer } from './core/mail/mailer.js';
import type { Locale, Translator } from './core/locales.js';
import { siteNamesIn } from './core/site-name.js';
import { siteTranslator } from './i18n/catalogs.js';
import { noticingSecurityLog } from './core/accounts/security-notices.js';
import { createMailTransport } from './mail/transports.js';
import { type Metrics, createMetrics } from './observability/metrics.js';
import { sharpReencoder } from './images/sharp-reencoder.js';
import { HttpLogoutSender } from './outbound/logout-sender.js';
import { HttpClientMetadataFetcher } from './outbound/client-metadata-fetcher.js';
import { ClientMetadataDocuments } from './core/oauth/client-metadata.js';
import pino from 'pino';
import { ApiLimits } from './core/api/limits.js';
import { UsageRecorder } from './core/api/bearer.js';
import { MemoryRateLimiter } from './ratelimit/memory.js';
import { RedisRateLimiter, rateLimiterUse } from './ratelimit/redis.js';
import { RedisReplayStore, replayUse } from './replay/redis.js';
import { GuardedRedis, type RedisUse } from './redis/connect.js';

export { prepareDatabase } from './base-deps.js';

/**
 * What a server does before it serves, all in the one turn of starting instances (the
 * migrations'): migrates, runs `seed` (the demo on a new database), then seals what is stored
 * plain with its KEYS_SECRET or refuses sealed values it cannot open (`sealStoredSecrets`), and
 * makes the signing keys and shared HMAC keys a new database lacks. Of two instances starting at
 * once with different KEYS_SECRETs, each would otherwise find nothing sealed and seal, or make,
 * part of the secrets under its own (attack134); in turns, the second finds the first's and is
 * refused before it writes, on a database stored plain as on a new one. The HMAC keys are made
 * here rather than when the server first reads them (`SharedKeys.readAll`, before it listens): an
 * instance started without KEYS_SECRET whose turn came first would make them in plaintext after
 * the turn of one started with it, which had sealed everything else (attack135).
 */
export async function prepareStart(deps: Pick<BaseDeps, 'database' | 'stores' | 'clock' | 'sharedKeys' | 'settings'>, seed?: () => Promise<void>): Promise<void> {
  const { keysSecret } = deps.settings;
  await prepareDatabase(deps, async () => {
    await seed?.();
    await sealStoredSecrets(deps.stores, keysSecret);
    await ensureSigningKeys(deps.stores, deps.clock, keysSecret);
    await deps.sharedKeys.readAll();
  });
}

export interface Deps extends BaseDeps {
  readonly limiter: RateLimiter;
  /** Whether REDIS_URL reaches a replica (src/redis/connect.ts, `reachesReplica`): /readyz names it meanwhile. */
  readonly redisReachesReplica: () => boolean;
  /**
   * The resource API's limits (src/core/api/limits.ts), one for every gate of the instance
   * (`/api/open/v1`, `/mcp`, `/userinfo`): an address refused at one is refused at all.
   */
  readonly apiLimits: ApiLimits;
  /**
   * The record of tokens' last uses, one memory for every gate of the instance (the API, MCP and
   * UserInfo): a token used at all three within a minute is written once.
   */
  readonly tokenUses: UsageRecorder;
  readonly metrics: Metrics;
  /** id_token signing keys and the JWKS, shared by every request. */
  readonly keys: KeyRing;
  /** Signs and reads the device cookies of sign-in throttling. */
  readonly deviceCookies: DeviceCookies;
  /** Sends the queued back-channel logouts while the app listens (`buildApp` starts and stops it). */
  readonly logoutDeliveries: LogoutDeliveryWorker;
  /** Sends the outbox's mail while the app listens (`buildApp` starts and stops it). */
  readonly mailDeliveries: MailDeliveryWorker;
  /** Marks hidden members' posts for the home page while the app listens (`buildApp` starts and stops it). */
  readonly hiddenFlags: HiddenFlagsWorker;
  /** The site's words in a language, the site named as SITE_NAME names it (`Settings.siteNames`). */
  readonly words: (locale: Locale) => Translator;
  /** Renders and queues mail; `enabled` says whether the site sends any (SMTP_URL, or `.eml` files on a developer's machine). */
  readonly mailer: Mailer;
  /** The accounts' security log; its events reach the server log through `audit`. */
  readonly securityLog: SecurityLog;
  /** Checks DPoP proofs (RFC 9449) at the token endpoint, the resource API and UserInfo. */
  readonly dpop: DpopVerifier;
  /** The apps client ID metadata documents describe, fetched and kept in memory (INTERFACE section 13). */
  readonly clientDocuments: ClientMetadataDocuments;
  /** Decodes and encodes anew every uploaded avatar (src/images/). */
  readonly images: ImageReencoder;
  /** Counts the staff console's daily figures in memory (`audit` counts what it records). */
  readonly figures: FigureCounter;
  /** Counts the posts' views in memory: a published post's page, not its author's, once an hour per viewer. */
  readonly views: ViewCounter;
  /** Adds the figures' and the views' counts to the database while the app listens (`buildApp` starts and stops it). */
  readonly countFlush: CountFlush;
  /** Work requests start and do not wait for (`buildApp` logs its failures and waits for it on close). */
  readonly background: BackgroundTasks;
}

export interface DepsOverrides extends BaseDepsOverrides {
  limiter?: RateLimiter;
  /**
   * Put before the limiter's (`rl:`) and the replay cache's (`dpop:`) keys in Redis instead of
   * `svc:`: tests give each app one of its own, so a run never counts on top of an earlier run's
   * windows, which a test's fixed clock would otherwise meet again.
   */
  redisKeyPrefix?: string;
}

/** What the service sends Redis: the start's check runs it, and a connection after an outage too (src/redis/connect.ts). */
export const REDIS_USES: readonly RedisUse[] = [rateLimiterUse, replayUse];

/** Redis when REDIS_URL is set (counters shared by every instance), memory otherwise. */
function createLimiter(redis: GuardedRedis | undefined, keyPrefix: string | undefined): RateLimiter {
  return redis ? new RedisRateLimiter({ redis, ...(keyPrefix === undefined ? {} : { keyPrefix: `${keyPrefix}rl:` }) }) : new MemoryRateLimiter();
}

/** Where accepted DPoP proofs are remembered: Redis when REDIS_URL is set (the database while it is away), else the database. */
function createDpopReplay(redis: GuardedRedis | undefined, stores: Stores, keyPrefix: string | undefined): DpopReplayStore {
  return redis ? new RedisReplayStore({ redis, fallback: stores.dpopProofs, ...(keyPrefix === undefined ? {} : { keyPrefix: `${keyPrefix}dpop:` }) }) : stores.dpopProofs;
}

export function createDeps(settings: Settings, overrides: DepsOverrides = {}): Deps {
  const base = createBaseDeps(settings, overrides);
  const { stores, clock } = base;
  // One connection to Redis for the limiter and the replay cache (src/redis/connect.ts).
  const redis = settings.redisUrl === undefined ? undefined : new GuardedRedis(settings.redisUrl, {
    logger: pino({ level: settings.logLevel, name: 'redis' }),
    uses: REDIS_USES,
  });
  const limiter = overrides.limiter ?? createLimiter(redis, overrides.redisKeyPrefix);
  const keys = new KeyRing(stores, clock, settings.keysSecret);
  const metrics = createMetrics();
  const dpopReplay = createDpopReplay(redis, stores, overrides.redisKeyPrefix);
  const sender = new HttpLogoutSender({ allowPrivateAddresses: settings.backchannelAllowPrivate, timeoutMs: SEND_TIMEOUT_MS });
  const mailTransport = createMailTransport(settings.mail, settings.mailFrom);
  const words = siteTranslator(settings.siteNames);
  const mailer = new Mailer(mailTransport !== undefined, words);
  const figures = new FigureCounter(settings.siteTimeZone);
  const audit = figures.counting(base.audit, () => clock.now());
  const views = new ViewCounter();
  return {
    ...base,
    audit,
    figures,
    views,
    countFlush: new CountFlush({ 'overview figures': figures, 'post views': views }, stores, clock),
    keys,
    deviceCookies: new DeviceCookies(base.sharedKeys),
    logoutDeliveries: new LogoutDeliveryWorker({ stores, clock, keys, settings, metrics }, sender, settings.logoutDeliveryIntervalSeconds * 1000),
    mailDeliveries: new MailDeliveryWorker({ stores, clock, metrics }, mailTransport, settings.mailDeliveryIntervalSeconds * 1000),
    hiddenFlags: new HiddenFlagsWorker(stores.posts),
    words,
    mailer,
    securityLog: noticingSecurityLog({ stores, clock, mailer, settings }, audit),
    dpop: new DpopVerifier(new DpopNonces(base.sharedKeys), dpopReplay, clock),
    clientDocuments: new ClientMetadataDocuments(new HttpClientMetadataFetcher(settings.clientMetadata.allowPrivate), clock, audit, settings.clientMetadata, siteNamesIn(words)),
    images: sharpReencoder,
    background: new BackgroundTasks(),
    limiter,
    redisReachesReplica: () => redis?.reachesReplica ?? false,
    apiLimits: new ApiLimits(limiter, settings.rateLimitPerMinute),
    tokenUses: new UsageRecorder(),
    metrics,
    close: async () => {
      redis?.close();
      await base.close();
    },
  };
}
