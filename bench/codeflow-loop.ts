/**
 * The returning user's code flow (scenarios e1 and e2: a signed-in browser whose consent is
 * remembered asks GET /oauth/authorize, 302 with a code; the public client redeems it with its
 * PKCE verifier) through the whole app in process (`app.inject`), on a SQLite file or, with
 * `LOOP_DATABASE_URL`, on that PostgreSQL server: Fastify's routing, hooks and reply, our routes,
 * the statements, the audit line written to /dev/null; not Node's HTTP server. `USERS` signed-in
 * users take turns, `AT_ONCE` flows in flight; `SCOPE` is e1's (`openid profile:read posts:read`,
 * the default) or e2's (`profile:read posts:read`).
 *
 * Given checkouts (default: this one), each gets an app of its own code on a file (or a schema,
 * dropped at the end) of its own, and their rounds take turns, so the machine's drift falls on all
 * alike. Prints CPU µs per flow (both requests) for each, median of the rounds: our process's
 * (`median`) and, on a PostgreSQL server on this machine, its backends' (`databaseMedian`, read
 * from /proc by their `application_name`).
 *   LOOP_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test SCOPE='profile:read posts:read' npx tsx bench/codeflow-loop.ts /tmp/main .
 */
import { createHash, randomBytes } from 'node:crypto';
import { alternatingRounds, loader, postgresUrl, startLoopApp } from './in-process-loop.js';

const FLOWS = Number(process.env.FLOWS ?? 1_000);
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const SCOPE = process.env.SCOPE ?? 'openid profile:read posts:read';
const USERS = 64;
const REDIRECT = 'https://app.example/callback';

/** An app of `checkout`'s code with a public client and `USERS` signed-in users who consented; `flow()` runs one flow. */
async function setUp(checkout: string): Promise<() => Promise<void>> {
  const [{ createAccount }, { registerClient }, { hashSecret }] = await Promise.all([
    'src/core/accounts/accounts.ts', 'src/core/oauth/clients.ts', 'src/core/credentials/formats.ts',
  ].map(loader(checkout)));
  const { app, deps } = await startLoopApp(checkout, 'codeflow_loop', process.env.LOOP_REDIS_URL ? { REDIS_URL: process.env.LOOP_REDIS_URL } : {});
  const now = deps.clock.now();
  const { client } = await registerClient(deps.stores, deps.clock, {
    name: 'Loop', type: 'public', redirectUris: [REDIRECT], ownerId: null, homepageUrl: 'https://app.example', description: 'The code flow loop.',
  });
  const cookies: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await createAccount(deps.stores, deps.clock, { username: `loop${i}`, password: 'correct horse battery' });
    const id = randomBytes(32).toString('base64url');
    await deps.stores.sessions.create({ idHash: hashSecret(id), userId: user.id, authTime: now, expiresAt: now + 86_400_000, amr: ['pwd'] }, now);
    await deps.stores.consents.save(user.id, client.clientId, SCOPE, now);
    cookies.push(`svc_session=${id}`);
  }
  const verifier = randomBytes(32).toString('base64url');
  const authorize = `/oauth/authorize?${new URLSearchParams({
    response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: SCOPE, state: 'loop', nonce: 'loop',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  })}`;
  const exchange = new URLSearchParams({ grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: client.clientId, code_verifier: verifier }).toString();
  let next = 0;
  return async () => {
    const cookie = cookies[next++ % USERS]!;
    const redirect = await app.inject({ method: 'GET', url: authorize, headers: { cookie } });
    const code = redirect.statusCode === 302 ? new URL(redirect.headers.location as string).searchParams.get('code') : null;
    if (code === null) throw new Error(`authorize: ${redirect.statusCode} ${redirect.body.slice(0, 200)}`);
    const response = await app.inject({
      method: 'POST', url: '/api/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `${exchange}&code=${code}`,
    });
    if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`);
  };
}

const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ['.'];
const rounds = await alternatingRounds(checkouts, setUp, FLOWS, ROUNDS);
console.log(JSON.stringify({
  flows: FLOWS, rounds: ROUNDS, scope: SCOPE, database: postgresUrl === undefined ? 'sqlite' : 'postgres', redis: process.env.LOOP_REDIS_URL !== undefined, cpuUsPerFlow: rounds,
}));
process.exit(0);
