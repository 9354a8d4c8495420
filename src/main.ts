/**
 * `npm start`: read settings → open and migrate the database → seed the demo on a new one →
 * serve. SIGTERM and SIGINT finish in-flight requests, close the database and exit 0.
 * With WORKERS=N the primary prepares the database once, then N worker processes share the port.
 */
import cluster from 'node:cluster';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildApp } from './app.js';
import { type Settings, SettingsError, loadSettings } from './config/settings.js';
import { ensureSigningKeys } from './core/keys.js';
import { type DemoCredentials, seedDemo } from './demo.js';
import { createDeps, prepareDatabase } from './deps.js';
import { scheduleJanitor } from './janitor.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** Where the demo's client secret is kept for the demo app, beside the embedded database. */
export function demoCredentialsPath(settings: Settings): string {
  const folder = settings.database.kind === 'sqlite' && settings.database.path !== ':memory:'
    ? dirname(settings.database.path) : './data';
  return join(folder, 'demo-credentials.json');
}

export function readDemoCredentials(settings: Settings): DemoCredentials | undefined {
  try {
    return JSON.parse(readFileSync(demoCredentialsPath(settings), 'utf8')) as DemoCredentials;
  } catch {
    return undefined;
  }
}

function banner(settings: Settings, demo: DemoCredentials | undefined): string {
  const workers = settings.workers > 1 ? `, ${settings.workers} workers` : '';
  const lines = [`Listening on ${settings.baseUrl} (database: ${settings.database.kind}${workers})`];
  if (demo) {
    lines.push(
      '',
      `Demo sign-in:        ${demo.username} / ${demo.password}   at ${settings.baseUrl}/login`,
      `Demo app:            ${settings.baseUrl}/demo-app`,
      `Confidential client: client_id=${demo.confidentialClient.clientId}`,
      `                     client_secret=${demo.confidentialClient.clientSecret}`,
      `                     redirect_uri=${demo.confidentialClient.redirectUri}`,
      `Public client:       client_id=${demo.publicClient.clientId}`,
      `                     redirect_uri=${demo.publicClient.redirectUri} (any port)`,
      `Developer docs:      ${settings.baseUrl}/docs`,
    );
  }
  return lines.join('\n');
}

/** Migrates, creates signing keys on first start, and seeds the demo on a new database. */
async function prepare(settings: Settings): Promise<void> {
  const deps = createDeps(settings);
  try {
    const { isNew } = await prepareDatabase(deps);
    await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
    if (settings.demo && isNew) {
      const created = await seedDemo(deps.stores, deps.clock, settings.baseUrl);
      if (created) writeFileSync(demoCredentialsPath(settings), `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
    }
  } finally {
    await deps.close();
  }
}

/** Serves until SIGTERM/SIGINT; returns once listening. */
async function serve(settings: Settings): Promise<void> {
  const deps = createDeps(settings);
  const demo = settings.demo ? readDemoCredentials(settings) : undefined;
  const app = await buildApp(deps, {
    demoApp: demo && {
      issuer: settings.baseUrl,
      clientId: demo.confidentialClient.clientId,
      clientSecret: demo.confidentialClient.clientSecret,
      redirectUri: demo.confidentialClient.redirectUri,
    },
  });
  await app.listen({ port: settings.port, host: settings.host });
  const stopJanitor = scheduleJanitor(deps, app.log);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    stopJanitor();
    await app.close();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The primary of WORKERS=N: forks the workers, replaces one that dies, stops them all on a signal. */
function supervise(settings: Settings): Promise<void> {
  let stopping = false;
  const fork = () => cluster.fork();
  return new Promise((resolve) => {
    let listening = 0;
    cluster.on('listening', () => { if (++listening === settings.workers) resolve(); });
    cluster.on('exit', (worker, code) => {
      if (!stopping) {
        process.stderr.write(`worker ${worker.process.pid} exited (${code}); starting another\n`);
        fork();
      } else if (Object.keys(cluster.workers ?? {}).length === 0) {
        process.exit(0);
      }
    });
    const stop = () => {
      if (stopping) return;
      stopping = true;
      setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    for (let i = 0; i < settings.workers; i++) fork();
  });
}

async function main(): Promise<void> {
  let settings: Settings;
  try {
    settings = loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (cluster.isWorker) return serve(settings);
  await prepare(settings);
  if (settings.workers > 1) await supervise(settings);
  else await serve(settings);
  process.stdout.write(`${banner(settings, settings.demo ? readDemoCredentials(settings) : undefined)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
