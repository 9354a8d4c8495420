/**
 * Several app instances on one database (and one Redis when given), as behind a load balancer:
 * each is its own `createDeps` + `buildApp` on its own port, so nothing in memory is shared between
 * them — only what lives in the database and in Redis. `startInstances` gives them one BASE_URL, as
 * production does; `startAppsForSuite` gives each its own, as `startTestApp` does, for the helpers
 * that drive a TestApp.
 */
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadSettings } from '../../src/config/settings.js';
import { NO_AUDIT } from '../../src/core/audit.js';
import type { Clock } from '../../src/core/time.js';
import { type Deps, createDeps, prepareStart } from '../../src/deps.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { type TestApp, type TestAppOptions, startTestApp } from './app.js';
import { TestClock } from './clock.js';
import type { TestDatabase } from './databases.js';
import { PORT_ATTEMPTS, freePort, portTaken } from './ports.js';
import { SHARED_LIMITER_COMMAND_TIMEOUT_MS, uniqueKeyPrefix } from './redis.js';

export { freePort };

export interface Instance {
  app: FastifyInstance;
  deps: Deps;
  /** Where this instance listens (http://127.0.0.1:PORT). */
  base: string;
  limiter?: RedisRateLimiter;
}

export interface Instances {
  list: Instance[];
  /** The shared issuer and root of absolute URLs: the first instance's address. */
  issuer: string;
  close(): Promise<void>;
}

/**
 * With `REDIS_URL` in `env`, the instances share counters and the DPoP replay cache under a key
 * prefix of this call's own (so repeated runs never share sign-in or API counts), or under
 * `redisKeyPrefix`: calls given one share them, as the instances of one service do. With `clock`, every instance reads that
 * one clock, as machines whose clocks agree would. With `logLines`, the instances' log lines (at
 * `info`) are collected there instead of silenced. Should one fail to start, those started are
 * closed before the error is thrown: a server left listening would keep the test process alive.
 */
export async function startInstances(
  databaseUrl: string, count: number, env: Record<string, string | undefined> = {}, options: { clock?: Clock; logLines?: string[]; redisKeyPrefix?: string } = {},
): Promise<Instances> {
  const keyPrefix = options.redisKeyPrefix ?? uniqueKeyPrefix();
  const list: Instance[] = [];
  const close = async () => {
    for (const instance of list) await closeInstance(instance);
  };
  try {
    for (let attempts = 0; list.length < count;) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const settings = loadSettings({ DATABASE_URL: databaseUrl, BASE_URL: list[0]?.base ?? base, PORT: String(port), DEMO: '0', JANITOR_INTERVAL: '0', ...env });
      let limiter: RedisRateLimiter | undefined;
      let deps: Deps | undefined;
      let app: FastifyInstance | undefined;
      try {
        limiter = settings.redisUrl ? new RedisRateLimiter({ url: settings.redisUrl, keyPrefix, commandTimeoutMs: SHARED_LIMITER_COMMAND_TIMEOUT_MS }) : undefined;
        deps = createDeps(settings, { audit: NO_AUDIT, redisKeyPrefix: keyPrefix, ...(limiter ? { limiter } : {}), ...(options.clock ? { clock: options.clock } : {}) });
        if (list.length === 0) {
          await prepareStart(deps);
        }
        const { logLines } = options;
        app = await buildApp(deps, logLines ? { logLevel: 'info', logStream: { write: (line) => { logLines.push(line); } } } : { logLevel: 'silent' });
        await app.listen({ port, host: '127.0.0.1' });
      } catch (error) {
        await closeInstance({ app, deps, limiter });
        // Another test file running at the same time took the port since `freePort` chose it.
        if (portTaken(error) && ++attempts < PORT_ATTEMPTS) continue;
        throw error;
      }
      list.push({ app, deps, base, ...(limiter ? { limiter } : {}) });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { list, issuer: list[0]!.base, close };
}

async function closeInstance(instance: { app?: FastifyInstance | undefined; deps?: Deps | undefined; limiter?: RedisRateLimiter | undefined }): Promise<void> {
  await instance.app?.close();
  await instance.deps?.close();
  await instance.limiter?.close();
}

export interface SuiteAppsOptions extends Omit<TestAppOptions, 'limiter' | 'redisKeyPrefix'> {
  /** Each app counts in this Redis under one key prefix of the suite's own: the apps share their limits, and no other run's. */
  redisUrl?: string;
}

/** `Count` apps as a tuple of that length, so a suite can name each one. */
export type TestApps<Count extends number, Started extends TestApp[] = []> =
  number extends Count ? TestApp[] : Started['length'] extends Count ? Started : TestApps<Count, [...Started, TestApp]>;

/**
 * `count` TestApps over one database, started in the calling suite's `before` and closed in its
 * `after`, last first. All read one clock (`options.clock`, else a new TestClock), as machines
 * whose clocks agree. `started` receives them in order, before the first test.
 */
export function startAppsForSuite<Count extends number>(
  database: TestDatabase, count: Count, options: SuiteAppsOptions, started: (apps: TestApps<Count>) => void,
): void {
  const apps: TestApp[] = [];
  before(async () => {
    const { redisUrl, ...appOptions } = options;
    const clock = options.clock ?? new TestClock();
    const keyPrefix = uniqueKeyPrefix();
    for (let i = 0; i < count; i++) {
      const limiter = redisUrl ? new RedisRateLimiter({ url: redisUrl, keyPrefix, commandTimeoutMs: SHARED_LIMITER_COMMAND_TIMEOUT_MS }) : undefined;
      // One prefix for what the apps keep in Redis, with `REDIS_URL` in `env` too (the DPoP replay cache), as one service's instances share it.
      const app = await startTestApp(database, { ...appOptions, clock, redisKeyPrefix: keyPrefix, ...(limiter ? { limiter } : {}) });
      apps.push(limiter ? { ...app, close: async () => { await app.close(); await limiter.close(); } } : app);
    }
    started(apps as TestApps<Count>);
  });
  after(async () => {
    for (const app of apps.reverse()) await app.close();
  });
}
