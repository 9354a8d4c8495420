/**
 * The server process, started by `src/main.ts`: read settings → open and migrate the database →
 * seed the demo on a new one → serve → move a kept demo's app to this start's address. SIGTERM and SIGINT finish in-flight requests, close the
 * database, flush what the process still holds for elsewhere (the last traces) and exit 0.
 * With WORKERS=N the primary prepares the database once, then N worker processes share the port.
 */
import cluster, { type Worker } from 'node:cluster';
import { buildApp } from './app.js';
import { type Settings, SettingsError, isLoopbackBaseUrl, loadSettings } from './config/settings.js';
import type { UserStatus } from './core/accounts/ports.js';
import { PLAINTEXT_AT_REST_WARNING } from './core/credentials/secrets-at-rest.js';
import { terminalLine } from './core/text.js';
import { type DemoCredentials, demoAccount, demoAppAddresses, demoAppMoves, demoCredentialsPath, keptDemoProblem, liveDemoCredentials, moveDemoApp, saveDemoCredentials, seedDemo } from './demo.js';
import { type BaseDeps, createBaseDeps, inStartTurn } from './base-deps.js';
import { type Deps, REDIS_USES, createDeps, prepareStart } from './deps.js';
import { type MetricsSource, buildMetricsApp } from './http/metrics-app.js';
import { answerPrimary, workersMetrics } from './observability/cluster-metrics.js';
import { scheduleJanitor } from './janitor.js';
import { type RedisCheck, checkRedisDatabase } from './redis/connect.js';
import { tablesSchema } from './storage/migrate.js';

const SHUTDOWN_GRACE_MS = 10_000;
/** What a stop that outlived its grace says, as it exits 1 (one process's log, the primary's stderr alike). */
const cutOff = (what: 'requests still in flight' | 'workers still running') =>
  `${what} ${SHUTDOWN_GRACE_MS / 1000} s after the signal were cut off; exiting with code 1`;
/** The longest wait before another try at a worker whose replacements keep dying (`supervise`). */
const REPLACEMENT_WAIT_MAX_S = 60;
/** How long a worker serves before its death is taken for a chance, not a start that fails (`supervise`). */
const STEADY_MS = 10_000;

/** What the banner shows of the demo: its credentials, fresh if just made, and its account's status (`undefined`: gone). */
interface DemoShown {
  credentials: DemoCredentials;
  fresh: boolean;
  accountStatus: UserStatus | undefined;
  /** Whether the kept password still signs the demo account in (`demoAccount`). */
  passwordKept: boolean;
}

/**
 * What `npm start` prints once listening. The demo's password and client secret are printed when
 * they were just made; later starts say where they are kept.
 */
function banner(settings: Settings, demo: DemoShown | undefined, schema: string | undefined): string {
  const workers = settings.workers > 1 ? `, ${settings.workers} workers` : '';
  // Where the tables are, on PostgreSQL: a search path can name more than one schema.
  const place = schema === undefined ? '' : `, schema "${schema}"`;
  const lines = [`Listening on ${settings.baseUrl} (database: ${settings.database.kind}${place}${workers})`];
  if (settings.metricsPort !== undefined) lines.push(`Metrics on http://${settings.host}:${settings.metricsPort}/metrics`);
  if (settings.otlpTraces !== undefined) lines.push(`Traces: OpenTelemetry over OTLP (${settings.otlpTraces.protocol}) to ${settings.otlpTraces.endpoint}`);
  if (settings.workers > 1 && settings.redisUrl === undefined) {
    lines.push(`Warning: without REDIS_URL each of the ${settings.workers} workers counts rate limits and sign-in failures on its own, so every limit is ${settings.workers} times higher.`);
  }
  // A developer's machine keeps its demo database to itself; anywhere else a copy of the
  // database (a backup, a replica) would hold secrets that sign and verify as this service.
  if (settings.keysSecret === undefined && !isLoopbackBaseUrl(settings.baseUrl)) lines.push(PLAINTEXT_AT_REST_WARNING);
  lines.push(mailLine(settings));
  if (demo) {
    const { credentials: c, fresh, accountStatus, passwordKept } = demo;
    const kept = `(in ${demoCredentialsPath(settings)})`;
    lines.push(
      '',
      accountStatus !== 'active'
        ? `Demo sign-in:        none: the ${c.username} account is ${accountStatus ?? 'gone'} (its apps still sign members in)`
        : passwordKept
          ? `Demo sign-in:        ${c.username} / ${fresh ? c.password : `password ${kept}`}   at ${settings.baseUrl}/login`
          : `Demo sign-in:        ${c.username} / its password was set again since the demo was seeded: the one kept in ${demoCredentialsPath(settings)} may no longer work   at ${settings.baseUrl}/login`,
      `Demo app:            ${settings.baseUrl}/demo-app`,
      `Confidential client: client_id=${c.confidentialClient.clientId}`,
      `                     client_secret=${fresh ? c.confidentialClient.clientSecret : kept}`,
      `                     redirect_uri=${c.confidentialClient.redirectUri}`,
      `Public client:       client_id=${c.publicClient.clientId}`,
      `                     redirect_uri=${c.publicClient.redirectUri} (any port)`,
      `Developer docs:      ${settings.baseUrl}/docs`,
    );
    if (fresh) lines.push('', `These are shown once; they are kept in ${demoCredentialsPath(settings)}, readable by you only.`);
  }
  return lines.join('\n');
}

/** Where mail goes, so a developer knows where to find a verification or reset link. */
function mailLine(settings: Settings): string {
  switch (settings.mail.kind) {
    case 'smtp': return `Mail: sent over SMTP to ${new URL(settings.mail.url).host} from ${settings.mailFrom}`;
    case 'files': return `Mail: no SMTP_URL, so each mail is written as an .eml file under ${settings.mail.directory}/`;
    case 'off': return 'Mail: off (no SMTP_URL): members cannot verify an e-mail address or reset a forgotten password';
  }
}

/**
 * What a start on a database without accounts prints (a PostgreSQL one, where the demo is off by
 * default): the commands that make it useful, to run with this server's settings. With the demo
 * on, why there is none: the database was prepared without it, and a start seeds only a new one.
 */
function nextSteps(settings: Settings): string {
  const svc = 'npm run --silent svc --';
  return [
    '',
    ...settings.demo ? [
      'No demo: a start seeds it only on a new database, and this one was prepared without it (signing keys or apps',
      `made by a start with DEMO=0 or by a command such as keys rotate). To add it: ${svc} demo`,
      '',
    ] : [],
    'No accounts yet. Next steps, run with this server\'s settings (the same DATABASE_URL):',
    '  1. Create the first account (admin is reserved at sign-up, not here); you are asked for its password:',
    `       ${svc} user create --username admin`,
    '  2. Register an app that signs users in (a confidential client; its secret is printed once):',
    `       ${svc} client create --name "My App" --type confidential --redirect-uri https://app.example/callback --owner admin`,
    `  3. Point the app at ${settings.baseUrl}/.well-known/openid-configuration`,
    `  ${svc} --help lists every command.`,
  ].join('\n');
}

/**
 * Migrates, seeds the demo on a new database, with KEYS_SECRET seals the secrets stored without it
 * (or refuses sealed ones it cannot open), and creates signing keys on first start, all in the
 * start turn (`prepareStart`); says what it seeded, and whether the database has any account at all.
 */
async function prepare(settings: Settings): Promise<{ created: DemoCredentials | undefined; accounts: boolean; schema: string | undefined }> {
  // The database alone: the server's own deps connect to Redis, and a Redis that is down would
  // be logged as unreachable once here and once again by the server.
  const deps = createBaseDeps(settings);
  try {
    // The demo is seeded in the migrations' turn: an instance starting at the same moment finds
    // its accounts, instead of an empty database it would print the next steps for.
    const demo: { created?: DemoCredentials | undefined } = {};
    const seedDemoIfNew = async () => {
      const keep = (credentials: DemoCredentials) => saveDemoCredentials(settings, credentials);
      demo.created = await seedDemo(deps.stores, deps.clock, { baseUrl: settings.baseUrl, when: 'new database', keep });
    };
    await prepareStart(deps, settings.demo ? seedDemoIfNew : undefined);
    const accounts = (await deps.stores.users.list({ afterId: 0, limit: 1 })).length > 0;
    return { created: demo.created, accounts, schema: await tablesSchema(deps.database.db) };
  } finally {
    await deps.close();
  }
}

/**
 * The kept demo, its app moved to this start's address if it is elsewhere. The move reads the
 * file again in the turn: another start may have moved it since. A file that needs no move is
 * taken as it is, without the turn (nearly every start): such a start is as if it had gone first.
 * The move waits for REDIS_URL's check (`checked`): a start that stops for it (exit 2) never
 * served, and leaves the demo app where a running instance has it (attack76).
 */
async function keptDemoMoved(settings: Settings, deps: Pick<BaseDeps, 'database' | 'stores' | 'clock'>, checked: Promise<void>, stop: AbortSignal | undefined): Promise<DemoCredentials | undefined> {
  const kept = await liveDemoCredentials(settings, deps.stores);
  if (!kept || !demoAppMoves(kept, settings.baseUrl)) return kept;
  await checked;
  return inStartTurn(deps, async () => {
    const now = await liveDemoCredentials(settings, deps.stores);
    return now && moveDemoApp(deps.stores, deps.clock, { baseUrl: settings.baseUrl, credentials: now, keep: (moved) => saveDemoCredentials(settings, moved) });
  }, stop);
}

/**
 * The demo as the banner shows it (`created` if just seeded), a kept demo's app moved to this
 * start's address first (`moveDemoApp`, another `PORT` or `BASE_URL`). Once the server listens,
 * so a start that never serves (its port taken) leaves the demo app where a running instance has
 * it (attack76); in the turn starting instances take, the kept file read in it, so two starts
 * move it one after the other, each from where the other left it (attack76: a file read before
 * another start's move committed was taken for the record, and the demo app left at an address
 * its client did not have).
 */
async function demoShown(settings: Settings, deps: Pick<BaseDeps, 'database' | 'stores' | 'clock'>, created: DemoCredentials | undefined, checked: Promise<void>, stop?: AbortSignal): Promise<DemoShown | undefined> {
  try {
    const credentials = created ?? (settings.demo ? await keptDemoMoved(settings, deps, checked, stop) : undefined);
    const problem = settings.demo && credentials === undefined ? keptDemoProblem(settings) : undefined;
    if (problem) process.stderr.write(`Warning: the kept demo credentials in ${demoCredentialsPath(settings)} are ignored: ${problem}. The banner and the demo app go without them.\n`);
    // A demo account since suspended, banned or deleted (the staff's or `svc user set-status`) no
    // longer signs in (attack68), nor does its kept password once another was set (attack70).
    const account = credentials && await demoAccount(deps.stores, credentials);
    return credentials && account && { credentials, fresh: created !== undefined, accountStatus: account.status, passwordKept: account.passwordKept };
  } catch (error) {
    // A signal stopped the server meanwhile (attack80: a wait for another start's turn held the stop 10 s, exit 1).
    if (stop?.aborted) return undefined;
    // The server already serves: a database held past its waits (another start's turn, a long
    // write) costs the demo's move, not the service (attack78: the start failed, exit 1).
    process.stderr.write(`Warning: the demo app was not moved to ${settings.baseUrl}/demo-app: ${error instanceof Error ? error.message : String(error)}. The next start moves it.\n`);
    return undefined;
  }
}

/** What a failed listen means, for the one line that stops the start. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another process listens on that port (EADDRINUSE)',
  EADDRNOTAVAIL: 'this machine has no such address, or not yet (EADDRNOTAVAIL)',
  EACCES: 'this process may not listen on that port (EACCES; ports below 1024 need privileges)',
  ENOTFOUND: 'the host name does not resolve (ENOTFOUND)',
  EAI_AGAIN: 'the host name could not be resolved just now (EAI_AGAIN)',
};

/**
 * Listens, or throws one line naming HOST and the port setting and what stood in the way. A
 * failed start (exit 1), not a bad setting: HOST and the port were well-formed (src/config), and
 * what stands in the way may pass (another process frees the port, the network comes up), so a
 * process manager retrying is right.
 */
async function listenOn(app: { listen(options: { port: number; host: string }): Promise<unknown> }, host: string, setting: 'PORT' | 'METRICS_PORT', port: number): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    // What the app's own onReady hooks refuse (shared keys it cannot open) is no port's fault.
    if ((error as NodeJS.ErrnoException).syscall === undefined) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? '';
    throw new Error(`cannot listen on HOST=${host} ${setting}=${port}: ${LISTEN_FAILURES[code] ?? (error as Error).message}`, { cause: error });
  }
}

/** What the process start hands the server: work to finish before a clean exit. */
export interface ProcessHooks {
  /** Runs after the server and the database closed, before exit 0 (src/main.ts: traces are flushed). */
  beforeExit(): Promise<void>;
}

/**
 * Serves until SIGTERM/SIGINT; returns once listening, with the server's deps and a signal aborted
 * when a stop begins. /readyz answers 503 while `redisCheck` is under way.
 */
async function serve(settings: Settings, hooks: ProcessHooks, redisCheck: RedisSettingsCheck): Promise<{ deps: Deps; stopped: AbortSignal }> {
  const deps = createDeps(settings);
  // Under WORKERS=N the primary serves every worker's metrics merged, asking each from here on.
  if (cluster.isWorker) answerPrimary(deps.metrics.registry);
  const demo = settings.demo ? await liveDemoCredentials(settings, deps.stores) : undefined;
  // The demo app's addresses are this start's: its client is moved there once the server listens (`demoShown`).
  const at = demoAppAddresses(settings.baseUrl);
  const app = await buildApp(deps, {
    startChecking: redisCheck.checking,
    startChecked: redisCheck.checked,
    demoApp: demo && {
      issuer: settings.baseUrl,
      clientId: demo.confidentialClient.clientId,
      clientSecret: demo.confidentialClient.clientSecret,
      redirectUri: at.redirect,
      ...(demo.confidentialClient.postLogoutRedirectUri ? { postLogoutRedirectUri: at.signedOut } : {}),
    },
  });
  await listenOn(app, settings.host, 'PORT', settings.port);
  const stopped = new AbortController();
  // As the app's workers (`buildApp`): nothing written before REDIS_URL passed its check.
  let stopJanitor = () => {};
  void redisCheck.checked.then(() => {
    if (!stopped.signal.aborted) stopJanitor = scheduleJanitor(deps, app.log);
  });
  const metrics = cluster.isWorker ? undefined : await serveMetrics(settings, deps.metrics.registry);

  const stop = async (signal: string) => {
    if (stopped.signal.aborted) return;
    stopped.abort();
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      app.log.error({ graceMs: SHUTDOWN_GRACE_MS }, cutOff('requests still in flight'));
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    stopJanitor();
    // Together: the public port stops taking requests (and /readyz answering) at once, whatever a scrape does.
    await Promise.all([metrics?.close(), app.close()]);
    await deps.close();
    await hooks.beforeExit();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return { deps, stopped: stopped.signal };
}

/** Serves `/metrics` on METRICS_PORT when it is set (INTERFACE section 8). */
async function serveMetrics(settings: Settings, source: MetricsSource): Promise<{ close(): Promise<void> } | undefined> {
  if (settings.metricsPort === undefined) return undefined;
  const app = buildMetricsApp(source);
  await listenOn(app, settings.host, 'METRICS_PORT', settings.metricsPort);
  return app;
}

/**
 * The primary of WORKERS=N: forks the workers, replaces one that dies once all are serving, stops
 * them all on a signal. A worker that dies before all are serving failed to start (its line says
 * why: the port taken, say) and another would too: the others are stopped and the start fails
 * (exit 1), rather than forking workers that fail for ever. Once serving, each worker's place is
 * a slot: a worker that dies is replaced at once, but when its replacement also dies before it
 * served `STEADY_MS` (refused before it listens for keys another instance sealed since, say, or a
 * crash that lasts), the next waits 2 s, then 4 s, doubling to 60 s, while the others serve: each
 * try loads the whole service. A worker of the slot that serves `STEADY_MS` ends the waits.
 * Once every worker is gone, `beforeExit` runs before the primary exits: the metrics port closes,
 * answering a scrape in flight rather than cutting it off.
 */
function supervise(settings: Settings, redisCheck: RedisSettingsCheck, beforeExit: () => Promise<void>): Promise<AbortSignal> {
  const stopped = new AbortController();
  let exitCode = 0;
  // Once, bounded by the stop's grace: every exit here follows `stop`, which set it (a scrape in
  // flight when the last worker went is answered at once, as no worker is left to ask).
  let exiting: Promise<void> | undefined;
  const exit = () => { exiting ??= beforeExit().finally(() => process.exit(exitCode)); };
  let serving = false;
  /** Each worker's slot (its workers' deaths since the last that served `STEADY_MS`, that one's counted), and when it listened. */
  const workers = new Map<Worker, { slot: { deaths: number }; listenedAt?: number }>();
  const listened = () => [...workers.values()].filter((worker) => worker.listenedAt !== undefined).length;
  const pendingForks = new Set<NodeJS.Timeout>();
  const fork = (slot = { deaths: 0 }) => {
    const worker = cluster.fork();
    // A message to a worker that just died (the answer to its question about REDIS_URL) fails with
    // EPIPE: its exit is handled below; unheard, the error would end the primary.
    worker.on('error', (error) => { process.stderr.write(terminalLine(`worker ${worker.process.pid}: ${error.message}`)); });
    workers.set(worker, { slot });
  };
  const replace = (worker: Worker, ending: number | string, slot: { deaths: number }, listenedAt: number | undefined) => {
    slot.deaths = listenedAt !== undefined && Date.now() - listenedAt >= STEADY_MS ? 1 : slot.deaths + 1;
    const wait = slot.deaths === 1 ? 0 : Math.min(REPLACEMENT_WAIT_MAX_S, 2 ** (slot.deaths - 1));
    const exited = `worker ${worker.process.pid} exited (${ending})${listenedAt === undefined ? ' before it listened' : ''}; starting another`;
    if (wait === 0) {
      process.stderr.write(`${exited}\n`);
      fork(slot);
      return;
    }
    process.stderr.write(`${exited} in ${wait} s\n`);
    const pending = setTimeout(() => {
      pendingForks.delete(pending);
      if (!stopped.signal.aborted) fork(slot);
    }, wait * 1000);
    pendingForks.add(pending);
  };
  return new Promise((resolve) => {
    // Each worker, a replacement too, asks whether REDIS_URL was checked, and is told once it is.
    cluster.on('message', (worker, message) => {
      if (message === REDIS_CHECK_ASKED) void redisCheck.checked.then(() => worker.isConnected() && worker.send(REDIS_CHECK_DONE));
    });
    cluster.on('listening', (worker) => {
      const known = workers.get(worker);
      if (known && known.listenedAt === undefined) known.listenedAt = Date.now();
      if (serving || listened() !== settings.workers) return;
      serving = true;
      resolve(stopped.signal);
    });
    cluster.on('exit', (worker, code, signal) => {
      const { slot, listenedAt } = workers.get(worker)!;
      workers.delete(worker);
      if (!stopped.signal.aborted && serving) {
        // Its exit code, or the signal that ended it (a SIGKILL by the kernel's OOM killer, say).
        replace(worker, code ?? signal, slot, listenedAt);
        return;
      }
      if (!stopped.signal.aborted) {
        // Its own line says why, when it could write one: a signal (the OOM killer's) leaves none.
        process.stderr.write(`worker ${worker.process.pid} exited (${code ?? signal}) before every worker listened; stopping the others\n`);
        exitCode = 1;
        stop();
      }
      // Its own count, not cluster.workers: Node lists a worker until its channel closes too, which
      // may come after its exit, and no later event would end the primary (attack140 F2: exit 1 at the grace).
      if (workers.size === 0) exit();
    });
    const stop = () => {
      if (stopped.signal.aborted) return;
      stopped.abort();
      for (const pending of pendingForks) clearTimeout(pending);
      // Every worker died and the next waits its turn: no exit will come to end the primary.
      if (workers.size === 0) exit();
      setTimeout(() => {
        // Killed, not left behind: a worker stuck (a busy loop, stopped) would outlive the primary.
        for (const worker of workers.keys()) worker.process.kill('SIGKILL');
        // Every worker gone: what is left is a scrape of METRICS_PORT (`beforeExit`).
        process.stderr.write(`${cutOff(workers.size > 0 ? 'workers still running' : 'requests still in flight')}\n`);
        process.exit(1);
      }, SHUTDOWN_GRACE_MS).unref();
      for (const worker of workers.keys()) worker.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    for (let i = 0; i < settings.workers; i++) fork();
  });
}

/**
 * A REDIS_URL the Redis refuses is a bad setting (exit 2), its one line naming what was refused
 * (never the URL, which may hold the password): a database number it does not have, credentials
 * it does not take, an ACL user that may not run the service's commands, or a Redis with one of
 * them renamed away, or a replica (by its ROLE, or READONLY to the service's writes), whose data
 * its primary replaces, or a Sentinel (by its ROLE), which serves no data. The counters would
 * otherwise go to memory for ever, or to another deployment's database 0. A Redis that does not
 * answer at start is no setting at fault: the server counts in memory until it does
 * (src/redis/connect.ts), and never counts in another database than the one named.
 */
function refuseBadRedisSettings(checked: RedisCheck): void {
  if (checked.outcome !== 'refused') return;
  const why = {
    database: `this Redis has no database ${checked.db} (${checked.reason}); the number after HOST:PORT/ must name one it has (0 to 15 with Redis's default databases 16)`,
    credentials: `this Redis refuses its credentials (${checked.reason}); give the password Redis requires, and the ACL user it belongs to if not the default: redis://[USER]:PASSWORD@HOST:PORT`,
    permissions: `this Redis's user may not run the service's commands (${checked.reason}); it needs EVAL, EVALSHA, GET, SET, INCR, DECR, EXISTS and EXPIRE, none renamed, on the keys svc:*`,
    replica: `it names a replica (${checked.reason}); it must name the primary`,
    sentinel: `it names a Redis Sentinel (${checked.reason}), which serves no data and which the service does not ask; it must name the primary itself, redis://HOST:PORT, by an address a failover moves to the new primary (a DNS name, a proxy)`,
  }[checked.refused];
  process.stderr.write(terminalLine(`invalid setting REDIS_URL: ${why}`));
  process.exit(2);
}

/** The start's check of REDIS_URL: whether it is still under way (`checking`), and its end. */
interface RedisSettingsCheck {
  checking(): boolean;
  /** Settles once REDIS_URL passed, or the check was given up after its wait; never on a refusal (exit 2). */
  checked: Promise<void>;
}

const REDIS_CHECKED: RedisSettingsCheck = { checking: () => false, checked: Promise.resolve() };

/**
 * Checks REDIS_URL (`refuseBadRedisSettings`) before the server listens; but a Redis that cannot
 * serve yet, LOADING its dataset or BUSY with a script, is checked while it listens: waiting for
 * it (up to 30 s) before listening, an orchestrator's liveness probe would find nothing there and
 * might restart the process for as long as Redis loads. Meanwhile /readyz answers 503, so no
 * traffic comes to an instance that may yet stop for a bad setting (exit 2, as at start); once
 * checked, or after those 30 s, it is ready (still not ready, Redis is met as at run time).
 * A refusal found meanwhile stops the process only once `prepared` settles: an exit in the middle
 * of `prepare` would cut short the migrations' turn, or a new database's demo before its
 * credentials are kept (`saveDemoCredentials`), and the next start would show none.
 */
async function checkRedisSettings(settings: Settings, prepared: Promise<void>): Promise<RedisSettingsCheck> {
  if (settings.redisUrl === undefined) return REDIS_CHECKED;
  const url = settings.redisUrl;
  const first = await checkRedisDatabase(url, REDIS_USES, undefined, 0);
  if (first.outcome !== 'not ready') {
    refuseBadRedisSettings(first);
    return REDIS_CHECKED;
  }
  let checking = true;
  const checked = checkRedisDatabase(url, REDIS_USES, undefined, undefined, true).then(async (later) => {
    await prepared;
    refuseBadRedisSettings(later);
    checking = false;
  });
  return { checking: () => checking, checked };
}

/** A worker's question to the primary (WORKERS=N), whose check of REDIS_URL it waits for, and the answer once it is done. */
const REDIS_CHECK_ASKED = 'svc:redis-check-asked';
const REDIS_CHECK_DONE = 'svc:redis-check-done';

/** A worker's view of the primary's check (`checkRedisSettings`): under way until the primary answers it is done. */
function primaryRedisCheck(settings: Settings): RedisSettingsCheck {
  if (settings.redisUrl === undefined) return REDIS_CHECKED;
  let checking = true;
  const checked = new Promise<void>((resolve) => {
    const told = (message: unknown) => {
      if (message !== REDIS_CHECK_DONE) return;
      checking = false;
      process.off('message', told);
      resolve();
    };
    process.on('message', told);
  });
  process.send!(REDIS_CHECK_ASKED);
  return { checking: () => checking, checked };
}

/**
 * Starts the server; exits on a bad setting (2) or a failed start (1), with one line saying why:
 * what the error quotes (a row key written by hand, a path, a database's words) has its invisible
 * characters escaped, as the command line's refusals have, so it cannot break the line or steer
 * the terminal.
 */
export async function runServer(hooks: ProcessHooks): Promise<void> {
  try {
    await start(hooks);
  } catch (error) {
    process.stderr.write(terminalLine(`failed to start: ${error instanceof Error ? error.message : String(error)}`));
    process.exit(1);
  }
}

async function start(hooks: ProcessHooks): Promise<void> {
  let settings: Settings;
  try {
    settings = loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(terminalLine(error.message));
      process.exit(2);
    }
    throw error;
  }
  if (cluster.isWorker) {
    await serve(settings, hooks, primaryRedisCheck(settings));
    return;
  }
  let preparedNow = () => {};
  const prepared = new Promise<void>((resolve) => { preparedNow = resolve; });
  const redisCheck = await checkRedisSettings(settings, prepared);
  const { created, accounts, schema } = await prepare(settings).finally(preparedNow);
  let demo: DemoShown | undefined;
  if (settings.workers > 1) {
    const workers = workersMetrics();
    let metrics: { close(): Promise<void> } | undefined;
    const stopped = await supervise(settings, redisCheck, async () => { await metrics?.close(); });
    metrics = await serveMetrics(settings, workers);
    const deps = createBaseDeps(settings);
    try {
      demo = await demoShown(settings, deps, created, redisCheck.checked, stopped);
    } finally {
      await deps.close();
    }
    // A signal meanwhile: the workers are stopping, and no banner invites a visit (attack138 F8).
    if (stopped.aborted) return;
  } else {
    // The server's own connection: the move needs no other.
    const served = await serve(settings, hooks, redisCheck);
    demo = await demoShown(settings, served.deps, created, redisCheck.checked, served.stopped);
    // A signal during the move: the log says "shutting down", and no banner invites a visit.
    if (served.stopped.aborted) return;
  }
  process.stdout.write(`${banner(settings, demo, schema)}${accounts ? '' : nextSteps(settings)}\n`);
}
