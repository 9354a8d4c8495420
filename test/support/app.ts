/** A real app over a real database for HTTP tests: migrated, keys in place, listening on a free port. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadSettings } from '../../src/config/settings.js';
import type { AuditEvent } from '../../src/core/audit.js';
import { pinoAuditSink } from '../../src/observability/audit.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { type Deps, createDeps, prepareStart } from '../../src/deps.js';
import { TestClock } from './clock.js';
import type { TestDatabase } from './databases.js';
import { PORT_ATTEMPTS, freePort, portTaken } from './ports.js';
import { uniqueKeyPrefix } from './redis.js';
import { TestSmtpServer } from './smtp.js';

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  clock: TestClock;
  /** http://127.0.0.1:PORT, also the issuer. */
  baseUrl: string;
  /** The audit events the app recorded, in order (logged only with `logLines`). */
  audit: AuditEvent[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: TestClock;
  limiter?: RateLimiter;
  /**
   * The key prefix of what the app keeps in Redis with `REDIS_URL` in `env` (its DPoP replay
   * cache, and its counters unless `limiter` is given): apps given one share them, as one
   * service's instances do. A prefix of the app's own unless told.
   */
  redisKeyPrefix?: string;
  /**
   * Collects log lines instead of silencing them: the app's, at `logLevel`, and the audit sink's,
   * as the server writes both to its standard output.
   */
  logLines?: string[];
  /** LOG_LEVEL for `logLines`; `info` unless told. */
  logLevel?: string;
  timeouts?: { headersMs: number; requestMs: number; idleMs: number; keepAliveMs: number };
  /** The host name of BASE_URL (still listening on 127.0.0.1): `localhost` for WebAuthn, which refuses IP addresses as relying parties. */
  hostname?: 'localhost';
}

/**
 * Starts the app on a port chosen free first, since BASE_URL names it; when another process took
 * that port before the app listens, the app is closed and started again on another.
 */
export async function startTestApp(database: TestDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? new TestClock();
  for (let attempt = 1; ; attempt++) {
    const linesBefore = options.logLines?.length ?? 0;
    try {
      return await startOnPort(database, options, clock, await freePort());
    } catch (error) {
      if (!portTaken(error) || attempt >= PORT_ATTEMPTS) throw error;
      // What the app given up logged is not the test's.
      options.logLines?.splice(linesBefore);
    }
  }
}

async function startOnPort(database: TestDatabase, options: TestAppOptions, clock: TestClock, port: number): Promise<TestApp> {
  const baseUrl = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  const settings = loadSettings({ DATABASE_URL: database.url, BASE_URL: baseUrl, PORT: String(port), DEMO: '0', ...options.env });
  const audit: AuditEvent[] = [];
  const logLevel = options.logLevel ?? 'info';
  const logStream = options.logLines && { write: (line: string) => { options.logLines!.push(line); } };
  const auditLog = logStream && pinoAuditSink({ logLevel, destination: logStream });
  const deps = createDeps(settings, {
    clock,
    audit: { record: (event, reqId) => { audit.push(event); auditLog?.record(event, reqId); } },
    ...(options.limiter ? { limiter: options.limiter } : {}),
    redisKeyPrefix: options.redisKeyPrefix ?? uniqueKeyPrefix(),
  });
  let app: FastifyInstance | undefined;
  try {
    await prepareStart(deps);
    app = await buildApp(deps, {
      ...(logStream ? { logLevel, logStream } : { logLevel: 'silent' }),
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    });
    await app.listen({ port, host: '127.0.0.1' });
  } catch (error) {
    await app?.close();
    await deps.close();
    throw error;
  }
  const started = app;
  return {
    app: started,
    deps,
    clock,
    baseUrl,
    audit,
    close: async () => {
      await started.close();
      await deps.close();
    },
  };
}

/** A test app whose mail goes to its own real SMTP server; `close` stops both. */
export interface TestAppWithSmtp extends TestApp {
  smtp: TestSmtpServer;
}

/**
 * Starts an SMTP server, then the app sending to it with SMTP_URL. MAIL_DELIVERY_INTERVAL is 0, so
 * no timer sends: a test sends what is queued itself (`deliverMail`). The clock starts at the real
 * time unless `options.clock` is given; `options.env` adds settings.
 */
export async function startAppWithSmtp(database: TestDatabase, options: TestAppOptions = {}): Promise<TestAppWithSmtp> {
  const smtp = await TestSmtpServer.start();
  let t: TestApp;
  try {
    t = await startTestApp(database, {
      ...options,
      clock: options.clock ?? new TestClock(Date.now()),
      env: { MAIL_DELIVERY_INTERVAL: '0', ...options.env, SMTP_URL: smtp.url },
    });
  } catch (error) {
    await smtp.stop();
    throw error;
  }
  return {
    ...t,
    smtp,
    close: async () => {
      try {
        await t.close();
      } finally {
        await smtp.stop();
      }
    },
  };
}
