/**
 * The soak: many simulated apps and users drive the whole flow (authorize, token, refresh, API
 * calls, revoke) against one or more instances at once for a bounded time, with deliberate
 * replays of codes and refresh tokens. Then it checks the invariants, on what the apps saw and
 * in the database, prints the figures, and exits non-zero on any broken invariant.
 *
 *   npm run soak -- [--seconds 30] [--users 20] [--apps 4] [--instances 2]
 *
 * It uses DATABASE_URL and REDIS_URL when set (instances share them), else a new SQLite file.
 * Every request goes to 127.0.0.1 only, and the run stops by itself.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/core/accounts/accounts.js';
import { registerClient } from '../src/core/oauth/clients.js';
import { writePost } from '../src/core/community/posts.js';
import type { Deps } from '../src/deps.js';
import { runJanitor } from '../src/janitor.js';
import { CookieJar, authorize, pkcePair, tokenRequest } from '../test/support/browser-flow.js';
import { temporarySqlitePath } from '../test/support/databases.js';
import { startInstances } from '../test/support/instances.js';

export interface SoakOptions {
  seconds: number;
  users: number;
  apps: number;
  instances: number;
  env?: Record<string, string | undefined>;
}

export interface SoakReport {
  figures: Record<string, number>;
  tableSizes: { before: Record<string, number>; afterJanitor: Record<string, number> };
  violations: string[];
}

interface App {
  clientId: string;
  secret?: string;
  redirectUri: string;
}

const RATE_LIMIT = 60;

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const env = options.env ?? process.env;
  const databaseUrl = env.DATABASE_URL || `sqlite:${temporarySqlitePath()}`;
  const figures: Record<string, number> = {
    flows: 0, codeReplays: 0, codeReplayWinners: 0, refreshes: 0, refreshReplays: 0, apiCalls: 0,
    apiRefusedByRateLimit: 0, revocations: 0, errors: 0,
  };
  const violations: string[] = [];
  const violate = (message: string) => { if (violations.length < 50) violations.push(message); };

  // Instances on one database (and one Redis), sharing one issuer as behind a load balancer;
  // with Redis they count under a key prefix of this run's own.
  const cluster = await startInstances(databaseUrl, options.instances, {
    REDIS_URL: env.REDIS_URL, RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
  });
  const instances = cluster.list;
  const { deps } = instances[0]!;
  const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;
  const anyBase = () => pick(instances).base;

  try {
    // The cast: users with a post each, and apps (half confidential, half public).
    const password = 'soak password 1';
    const run = randomBytes(3).toString('hex');
    const users: Array<{ id: number; username: string }> = [];
    for (let i = 0; i < options.users; i++) {
      const user = await createAccount(deps.stores, deps.clock, { username: `soak${run}u${i}`, password });
      await writePost(deps.stores, deps.clock, { authorId: user.id, title: `Post ${i}`, body: 'Hello', category: 'Soak', status: 'published' });
      users.push(user);
    }
    const apps: App[] = [];
    for (let i = 0; i < options.apps; i++) {
      const redirectUri = `https://app${i}.soak.example/callback`;
      const { client, secret } = await registerClient(deps.stores, deps.clock, {
        name: `Soak app ${i}`, type: i % 2 === 0 ? 'confidential' : 'public', redirectUris: [redirectUri],
      });
      apps.push(secret === undefined ? { clientId: client.clientId, redirectUri } : { clientId: client.clientId, secret, redirectUri });
    }
    const clientAuth = (app: App): Record<string, string> =>
      (app.secret ? { client_id: app.clientId, client_secret: app.secret } : { client_id: app.clientId });

    /**
     * 200s per token per minute window, as the apps saw them. The window is the one the server
     * counted the request in (its X-RateLimit-Reset): an answer that arrives just after a minute
     * turns was still counted in the minute before.
     */
    const allowedPerWindow = new Map<string, number>();
    const callApi = async (accessToken: string, path: string): Promise<number> => {
      const response = await fetch(`${anyBase()}/api/open/v1${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
      await response.arrayBuffer();
      figures.apiCalls! += 1;
      if (response.status === 429) figures.apiRefusedByRateLimit! += 1;
      if (response.status === 200) {
        const key = `${accessToken}:${response.headers.get('x-ratelimit-reset')}`;
        allowedPerWindow.set(key, (allowedPerWindow.get(key) ?? 0) + 1);
      }
      return response.status;
    };

    const deadline = Date.now() + options.seconds * 1000;
    const virtualUser = async (index: number) => {
      const user = users[index]!;
      const jar = new CookieJar();
      let signedIn = false;
      while (Date.now() < deadline) {
        const app = pick(apps);
        try {
          const pkce = pkcePair();
          const back = await authorize(jar, anyBase(), {
            clientId: app.clientId, redirectUri: app.redirectUri, scope: 'profile:read posts:read', codeChallenge: pkce.challenge,
          }, signedIn ? { consentBase: anyBase() } : { credentials: { username: user.username, password }, consentBase: anyBase() });
          signedIn = true;
          const code = back.get('code');
          if (!code) { violate(`authorization failed: ${back}`); continue; }
          const exchange = () => tokenRequest(anyBase(), {
            grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: pkce.verifier, ...clientAuth(app),
          });
          // One flow in ten races two redemptions of the same code: exactly one may win.
          const replay = Math.random() < 0.1;
          const results = replay ? await Promise.all([exchange(), exchange()]) : [await exchange()];
          const winners = results.filter((r) => r.status === 200);
          if (winners.length > 1) violate(`code redeemed ${winners.length} times`);
          if (replay) { figures.codeReplays! += 1; figures.codeReplayWinners! += winners.length; }
          figures.flows! += 1;
          if (winners.length === 0) {
            if (!replay) violate(`a fresh code was refused: ${JSON.stringify(results[0]?.body)}`);
            continue;
          }
          let tokens = winners[0]!.body as { access_token: string; refresh_token: string };
          if (replay) {
            // The losers were reuse: the winner's tokens must be dead now (INTERFACE section 2).
            if ((await callApi(tokens.access_token, '/me')) !== 401) violate('a token survived the reuse of its code');
            continue;
          }
          for (let i = 0; i < 3; i++) await callApi(tokens.access_token, i % 2 ? '/me/posts' : '/me');
          for (let i = 0; i < 2; i++) {
            const refreshed = await tokenRequest(anyBase(), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientAuth(app) });
            figures.refreshes! += 1;
            if (refreshed.status !== 200) { violate(`refresh refused: ${JSON.stringify(refreshed.body)}`); break; }
            const old = tokens;
            tokens = refreshed.body;
            // Now and then the app presents the rotated token again: with no replay window (the
            // default, seed section 3 rule 3) that is reuse, from any instance: refused, and the
            // whole family dies, its successor included.
            if (Math.random() < 0.1) {
              figures.refreshReplays! += 1;
              const replayed = await tokenRequest(anyBase(), { grant_type: 'refresh_token', refresh_token: old.refresh_token, ...clientAuth(app) });
              if (replayed.status !== 400 || replayed.body.error !== 'invalid_grant') violate('a rotated refresh token was accepted again');
              const next = await tokenRequest(anyBase(), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...clientAuth(app) });
              if (next.status !== 400) violate('the successor of a reused refresh token outlived its family');
              if ((await callApi(tokens.access_token, '/me')) !== 401) violate('a token survived the reuse of its family');
              break;
            }
            await callApi(tokens.access_token, '/me');
          }
          if (Math.random() < 0.3) {
            const revoke = await fetch(`${anyBase()}/api/oauth/revoke`, {
              method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ token: tokens.refresh_token, ...clientAuth(app) }),
            });
            figures.revocations! += 1;
            if (revoke.status !== 200) violate(`revocation answered ${revoke.status}`);
            // Revoking the refresh token ends its grant's access tokens, on every instance, at once.
            if ((await callApi(tokens.access_token, '/me')) !== 401) violate('an access token outlived the revocation of its grant');
          }
        } catch (error) {
          figures.errors! += 1;
          violate(`request failed: ${(error as Error).message}`);
        }
      }
    };

    // One token is hammered across every instance, to check the shared rate limit. Its user is
    // its own: a virtual user's code replay ends all of that user's grants for the app, and a dead
    // hammered token would make every later request from this address fail (then 429).
    const hammerUser = await createAccount(deps.stores, deps.clock, { username: `soak${run}hammer`, password });
    const hammer = async () => {
      const app = apps[0]!;
      const jar = new CookieJar();
      const pkce = pkcePair();
      const back = await authorize(jar, anyBase(), {
        clientId: app.clientId, redirectUri: app.redirectUri, scope: 'profile:read', codeChallenge: pkce.challenge,
      }, { credentials: { username: hammerUser.username, password } });
      const { body } = await tokenRequest(anyBase(), {
        grant_type: 'authorization_code', code: back.get('code')!, redirect_uri: app.redirectUri, code_verifier: pkce.verifier, ...clientAuth(app),
      });
      while (Date.now() < deadline) await callApi(body.access_token, '/me');
    };

    await Promise.all([...users.map((_, i) => virtualUser(i)), hammer()]);

    // Rate limits: with shared counters (Redis, or a single instance) never one request over.
    const tolerance = options.instances > 1 && !env.REDIS_URL ? RATE_LIMIT * (options.instances - 1) : 0;
    for (const [key, count] of allowedPerWindow) {
      if (count > RATE_LIMIT + tolerance) violate(`token window ${key.slice(-8)} allowed ${count} > ${RATE_LIMIT + tolerance}`);
    }
    figures.rateLimitTolerance = tolerance;

    // Invariants in the database.
    const db = deps.database.db;
    const live = await db.selectFrom('refresh_tokens').select(['grant_id', db.fn.countAll<number | string>().as('n')])
      .where('used_at', 'is', null).where('revoked_at', 'is', null).groupBy('grant_id').execute();
    const families = live.filter((row) => Number(row.n) > 1);
    if (families.length > 0) violate(`${families.length} families hold more than one live refresh token`);
    const codes = await db.selectFrom('authorization_codes').select(db.fn.countAll<number | string>().as('n'))
      .where('used_at', 'is not', null).executeTakeFirstOrThrow();
    figures.codesUsed = Number(codes.n);

    const before = await tableSizes(deps);
    // Everything is at most minutes old, so the janitor must keep it all: it deletes only past the audit window.
    await runJanitor(deps);
    const afterJanitor = await tableSizes(deps);
    if (afterJanitor.access_tokens !== before.access_tokens) violate('the janitor deleted live rows');
    return { figures, tableSizes: { before, afterJanitor }, violations };
  } finally {
    await cluster.close();
  }
}

async function tableSizes(deps: Deps): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['authorization_codes', 'grants', 'access_tokens', 'refresh_tokens', 'sessions'] as const) {
    const row = await deps.database.db.selectFrom(table).select(deps.database.db.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '30' }, users: { type: 'string', default: '20' },
      apps: { type: 'string', default: '4' }, instances: { type: 'string', default: '2' },
    },
  });
  const report = await runSoak({
    seconds: Math.min(3600, Number(values.seconds)), users: Number(values.users),
    apps: Number(values.apps), instances: Number(values.instances),
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(report.violations.length === 0 ? 'all invariants held\n' : `${report.violations.length} invariant(s) broken\n`);
  process.exit(report.violations.length === 0 ? 0 : 1);
}
