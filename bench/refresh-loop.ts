/**
 * A refresh without `openid` (scenario d2's request: HTTP Basic, `grant_type=refresh_token`) through
 * the whole app in process (`app.inject`), on a SQLite file or, with `LOOP_DATABASE_URL`, on that
 * PostgreSQL server: Fastify's routing, hooks and reply, our route, the rotation and its COMMIT,
 * the audit line written to /dev/null; not Node's HTTP server. `CHAINS` refresh chains rotate in
 * turn, `AT_ONCE` requests in flight.
 *
 * Given checkouts (default: this one), each gets an app of its own code on a file (or a schema,
 * dropped at the end) of its own, and their rounds take turns, so the machine's drift falls on all
 * alike. Prints CPU µs per refresh for each, median of the rounds: our process's only, not the
 * PostgreSQL server's.
 *   npx tsx bench/refresh-loop.ts [CHECKOUT ...]       # e.g. a copy of main, then .
 *   LOOP_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/refresh-loop.ts /tmp/main .
 */
import { alternatingRounds, loader, postgresUrl, startLoopApp } from './in-process-loop.js';

const REFRESHES = Number(process.env.REFRESHES ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const CHAINS = 64;

/** An app of `checkout`'s code with a confidential client and `CHAINS` refresh tokens; `refresh()` rotates the next. */
async function setUp(checkout: string): Promise<() => Promise<void>> {
  const [{ createAccount }, { registerClient }, { prepareTokens }] = await Promise.all([
    'src/core/accounts/accounts.ts', 'src/core/oauth/clients.ts', 'src/core/oauth/tokens/issue.ts',
  ].map(loader(checkout)));
  const { app, deps, settings } = await startLoopApp(checkout, 'refresh_loop');
  const now = deps.clock.now();
  const { client, secret } = await registerClient(deps.stores, deps.clock, {
    name: 'Loop', type: 'confidential', redirectUris: ['https://app.example/callback'], ownerId: null,
    homepageUrl: 'https://app.example', description: 'The refresh loop.',
  });
  const authorization = `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`;
  const chains: string[] = [];
  // The tokens' mark and the keys, as the token endpoint reads them before its transaction.
  const signing = { keys: await deps.keys.keySet(), marker: await deps.tokenMarks.ready() };
  for (let i = 0; i < CHAINS; i++) {
    const user = await createAccount(deps.stores, deps.clock, { username: `loop${i}`, password: 'correct horse battery' });
    const grant = await deps.stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const { issued, access, refresh } = await prepareTokens(now, settings, signing, {
      grant, user, client, accessScope: 'profile:read', refreshScope: 'profile:read', nonce: null, dpopJkt: null, resource: null,
    });
    await deps.stores.tokens.insertPair(access, refresh);
    chains.push(issued.refreshToken);
  }
  let next = 0;
  // A chain whose rotation is still in flight is passed over: on a loaded host one request can
  // stall while the others go round all the chains, and presenting its token again is reuse,
  // which ends the chain (the loop's error, not the app's).
  const inFlight = new Set<number>();
  return async () => {
    let chain = next++ % CHAINS;
    while (inFlight.has(chain)) chain = next++ % CHAINS;
    inFlight.add(chain);
    try {
      const response = await app.inject({
        method: 'POST', url: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        payload: `grant_type=refresh_token&refresh_token=${chains[chain]}`,
      });
      if (response.statusCode !== 200) throw new Error(`${checkout}: ${response.statusCode} ${response.body}`);
      chains[chain] = (JSON.parse(response.body) as { refresh_token: string }).refresh_token;
    } finally {
      inFlight.delete(chain);
    }
  };
}

const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ['.'];
const rounds = await alternatingRounds(checkouts, setUp, REFRESHES, ROUNDS);
console.log(JSON.stringify({
  refreshes: REFRESHES, rounds: ROUNDS, database: postgresUrl === undefined ? 'sqlite' : 'postgres', cpuUsPerRefresh: rounds,
}));
process.exit(0);
