/**
 * The statements and Redis commands of the bench's returning-user code flow (e1, e2) and of a
 * refresh (d, d2), listed: a signed-in browser whose consent is remembered asks GET
 * /oauth/authorize (302 with a code), a public client exchanges the code with its PKCE verifier at
 * POST /api/oauth/token, then refreshes the tokens it got once. The app runs
 * in this process over the database of `LOOP_DATABASE_URL` (a fresh schema, dropped afterwards;
 * embedded SQLite without it) and, with `LOOP_REDIS_URL`, Redis; pg's and ioredis's prototypes are
 * wrapped here, in this tool only, so the product carries no instrumentation.
 *
 *   LOOP_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test LOOP_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/codeflow-statements.ts
 *
 * Each flow is run a few times first, so statements made once per process (keys, marks, a client
 * read) are out of the list; then one flow of each scope is listed, request by request.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Browser, newClient, newUser, pkcePair, redirectParams, tokenRequest, PASSWORD } from '../test/oauth/helpers.js';
import { startTestApp } from '../test/support/app.js';
import { type TestDatabase, dropSchema, temporarySqliteDatabase, withSearchPath } from '../test/support/databases.js';

const databaseUrl = process.env.LOOP_DATABASE_URL;
const redisUrl = process.env.LOOP_REDIS_URL;

let log: string[] | undefined;
const note = (line: string) => log?.push(line);

const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as { text?: string } | string;
  note(`sql   ${(typeof first === 'string' ? first : first.text ?? '?').replace(/\s+/g, ' ')}`);
  return (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pgQuery;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, command: { name: string; args: unknown[] }, ...rest: unknown[]) {
  note(`redis ${command.name} ${command.args.slice(0, 2).map(String).join(' ')}`);
  return (sendCommand as (...a: unknown[]) => unknown).call(this, command, ...rest);
} as typeof sendCommand;

let database: TestDatabase = temporarySqliteDatabase();
const schema = `codeflow_${randomBytes(4).toString('hex')}`;
const admin = databaseUrl ? new pg.Client({ connectionString: databaseUrl }) : undefined;
if (databaseUrl && admin) {
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const url = withSearchPath(databaseUrl, schema);
  database = { name: 'postgres', target: { kind: 'postgres', url }, url };
}
const t = await startTestApp(database, { env: redisUrl ? { REDIS_URL: redisUrl } : {} });
try {
  const c = await newClient(t, { type: 'public' });
  const user = await newUser(t);
  const browser = new Browser(t);
  await browser.signIn(user.username, PASSWORD);

  const flow = async (scope: string): Promise<string> => {
    const pkce = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: c.client.clientId, redirect_uri: c.redirectUri, scope, state: 'bench',
      code_challenge: pkce.challenge, code_challenge_method: 'S256', ...(scope.includes('openid') ? { nonce: 'bench' } : {}),
    });
    note('GET /oauth/authorize');
    let response = await browser.fetch(`/oauth/authorize?${query}`);
    if (response.status === 200) throw new Error('consent is not remembered');
    const code = redirectParams(response).get('code')!;
    note('POST /api/oauth/token');
    response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri, code_verifier: pkce.verifier, client_id: c.client.clientId });
    if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { refresh_token: string }).refresh_token;
  };
  const refresh = async (refreshToken: string): Promise<void> => {
    note('POST /api/oauth/token (refresh)');
    const response = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: c.client.clientId });
    if (response.status !== 200) throw new Error(`refresh: ${response.status} ${await response.text()}`);
  };
  // The consent, remembered: the first authorization asks, the browser approves.
  const { obtainCode } = await import('../test/oauth/helpers.js');
  await obtainCode(browser, c, { scope: 'openid profile:read posts:read', pkce: pkcePair() });
  for (let i = 0; i < 5; i++) {
    await refresh(await flow('openid profile:read posts:read'));
    await refresh(await flow('profile:read posts:read'));
  }
  const listed = async (title: string, work: () => Promise<unknown>): Promise<void> => {
    log = [];
    await work();
    const lines = log;
    log = undefined;
    console.log(`\n${database.name}${redisUrl ? ' + redis' : ''}, ${title}: ${lines.filter((l) => l.startsWith('sql')).length} statements, ${lines.filter((l) => l.startsWith('redis')).length} Redis commands`);
    for (const line of lines) console.log(`  ${line.length > 220 ? `${line.slice(0, 220)}…` : line}`);
  };
  for (const scope of ['openid profile:read posts:read', 'profile:read posts:read']) {
    let refreshToken = '';
    await listed(`flow, scope "${scope}"`, async () => { refreshToken = await flow(scope); });
    await listed(`refresh, scope "${scope}"`, () => refresh(refreshToken));
  }
} finally {
  await t.close();
  if (admin) {
    await dropSchema(admin, schema);
    await admin.end();
  }
}
