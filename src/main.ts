/**
 * `npm start`: read settings → open and migrate the database → seed the demo on a new one →
 * serve. SIGTERM and SIGINT finish in-flight requests, close the database and exit 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildApp } from './app.js';
import { type Settings, SettingsError, loadSettings } from './config/settings.js';
import { ensureSigningKeys } from './core/keys.js';
import { type DemoCredentials, seedDemo } from './demo.js';
import { createDeps, prepareDatabase } from './deps.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** Where the demo's client secret is kept for the demo app, beside the embedded database. */
export function demoCredentialsPath(settings: Settings): string {
  const folder = settings.database.kind === 'sqlite' && settings.database.path !== ':memory:'
    ? dirname(settings.database.path) : './data';
  return join(folder, 'demo-credentials.json');
}

function readDemoCredentials(path: string): DemoCredentials | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DemoCredentials;
  } catch {
    return undefined;
  }
}

function banner(settings: Settings, demo: DemoCredentials | undefined): string {
  const lines = [`Listening on ${settings.baseUrl} (database: ${settings.database.kind})`];
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
  const deps = createDeps(settings);
  const { isNew } = await prepareDatabase(deps);
  await ensureSigningKeys(deps.stores, deps.clock, settings.keysSecret);
  const credentialsPath = demoCredentialsPath(settings);
  if (settings.demo && isNew) {
    const created = await seedDemo(deps.stores, deps.clock, settings.baseUrl);
    if (created) writeFileSync(credentialsPath, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  }
  const demo = settings.demo ? readDemoCredentials(credentialsPath) : undefined;
  const app = await buildApp(deps, {
    demoApp: demo && {
      issuer: settings.baseUrl,
      clientId: demo.confidentialClient.clientId,
      clientSecret: demo.confidentialClient.clientSecret,
      redirectUri: demo.confidentialClient.redirectUri,
    },
  });
  await app.listen({ port: settings.port, host: settings.host });
  process.stdout.write(`${banner(settings, demo)}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS);
    force.unref();
    await app.close();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
