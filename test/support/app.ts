/** A real app over a real database for HTTP tests: migrated, keys in place, listening on a free port. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadSettings } from '../../src/config/settings.js';
import type { AuditEvent } from '../../src/core/audit.js';
import { ensureSigningKeys } from '../../src/core/oidc/keys.js';
import { pinoAuditSink } from '../../src/observability/audit.js';
import { sealStoredSecrets } from '../../src/core/credentials/secrets-at-rest.js';
import type { RateLimiter } from '../../src/core/rate-limiter.js';
import { type Deps, createDeps, prepareDatabase } from '../../src/deps.js';
import { TestClock } from './clock.js';
import type { TestDatabase } from './databases.js';
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
 * Starts the app. It listens before the settings are final so BASE_URL can carry the real port:
 * the settings are loaded again with it, and the app is rebuilt on the same database.
 */
export async function startTestApp(database: TestDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? new TestClock();
  const probe = await import('node:net').then((net) => new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  }));
  const baseUrl = `http://${options.hostname ?? '127.0.0.1'}:${probe}`;
  const settings = loadSettings({ DATABASE_URL: database.url, BASE_URL: baseUrl, PORT: String(probe), DEMO: '0', ...options.env });
  const audit: AuditEvent[] = [];
  const logLevel = options.logLevel ?? 'info';
  const logStream = options.logLines && { write: (line: string) => { options.logLines!.push(line); } };
  const auditLog = logStream && pinoAuditSink({ logLevel, destination: logStream });
  const deps = createDeps(settings, {
    clock,
    audit: { record: (event, reqId) => { audit.push(event); auditLog?.record(event, reqId); } },
    ...(options.limiter ? { limiter: options.limiter } : {}),
  });
  await prepareDatabase(deps);
  await sealStoredSecrets(deps.stores, settings.keysSecret);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const app = await buildApp(deps, {
    ...(logStream ? { logLevel, logStream } : { logLevel: 'silent' }),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  await app.listen({ port: probe, host: '127.0.0.1' });
  return {
    app,
    deps,
    clock,
    baseUrl,
    audit,
    close: async () => {
      await app.close();
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
