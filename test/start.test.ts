/** `npm start` as a newcomer runs it: a new embedded database, the demo, the banner, SIGTERM. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { hash } from '@node-rs/argon2';
import { sql } from 'kysely';
import { hashSecret } from '../src/core/credentials/formats.js';
import { openDatabase } from '../src/storage/database.js';
import { serviceNodeFlags } from '../scripts/service-node-flags.mjs';
import { CookieJar, signIn } from './support/browser-flow.js';
import { HOSTILE_PORT, HOSTILE_PORT_SHOWN, svc } from './support/cli.js';
import { forEachDatabase, onPostgres, outsideConnection, temporarySqlitePath, untilWaitedOn } from './support/databases.js';
import { answers, compiled, descendants, isAlive, run, type Running, SERVICE_ENTRY } from './support/processes.js';
import { freePort, twoFreePorts } from './support/ports.js';

/** The service from its sources, as `npm start` runs it. */
function fromSources(env: Record<string, string>): Running {
  return run(process.execPath, ['--import', 'tsx', 'src/main.ts'], env);
}

/** `fromSources` with the demo on; `banner` resolves once it has printed all of it (its last line is the demo's). */
function startService(env: Record<string, string>): Running & { banner: Promise<string> } {
  const service = fromSources(env);
  return { ...service, banner: service.waitFor(/Developer docs:/) };
}

/** The usernames the SQLite database at `path` holds, oldest first. */
async function usernames(path: string): Promise<string[]> {
  const db = openDatabase({ kind: 'sqlite', path });
  try {
    return (await db.db.selectFrom('users').select('username').orderBy('id').execute()).map((u) => u.username);
  } finally {
    await db.close();
  }
}

/** A new SQLite database a first start seeded with the demo, then stopped; `env` starts the service on it again. */
async function seededByAFirstStart(): Promise<{ path: string; env: Record<string, string> }> {
  const path = temporarySqlitePath();
  const env = { DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: 'warn' };
  const first = startService({ ...env, PORT: String(await freePort()) });
  await first.banner;
  await stop(first);
  return { path, env };
}

/** Where a start with the demo on keeps its credentials for the PostgreSQL database at `url` (under ./data). */
async function keptDemoFile(url: string): Promise<string> {
  const { loadSettings } = await import('../src/config/settings.js');
  const { demoCredentialsPath } = await import('../src/demo.js');
  return demoCredentialsPath(loadSettings({ DATABASE_URL: url, DEMO: '1' }));
}

/** SIGTERM, then the exit code; a service that has already exited resolves at once. */
function stop(service: Running): Promise<number | string> {
  service.child.kill('SIGTERM');
  return service.exited;
}

test('npm start on a new embedded database seeds the demo, prints working credentials, and stops cleanly on SIGTERM', async () => {
  const path = temporarySqlitePath();
  const port = await freePort();
  const service = startService({ DATABASE_URL: `sqlite:${path}`, PORT: String(port), LOG_LEVEL: 'warn' });
  const banner = await service.banner;
  const base = `http://localhost:${port}`;
  assert.match(banner, new RegExp(`Listening on ${base}`));
  // The demo's password is random, printed once, and kept beside the database for the operator.
  const password = /Demo sign-in: +demo \/ (\S+)/.exec(banner)![1]!;
  assert.notEqual(password, 'demo-password');
  assert.ok(password.length >= 16, 'a password no one guesses');
  assert.equal((JSON.parse(readFileSync(join(dirname(path), 'demo-credentials.json'), 'utf8')) as { password: string }).password, password);
  const clientId = /Confidential client: client_id=(\w+)/.exec(banner)![1]!;
  const secret = /client_secret=(svcs_\w+)/.exec(banner)![1]!;
  assert.match(banner, /Public client: +client_id=\w+/);

  // The printed secret is the one the database holds (as a hash), so an app can use it.
  const db = openDatabase({ kind: 'sqlite', path });
  const row = await db.db.selectFrom('clients').select('secret_hash').where('client_id', '=', clientId).executeTakeFirst();
  await db.close();
  assert.equal(row?.secret_hash, hashSecret(secret));

  // The demo sign-in works.
  const page = await fetch(`${base}/login`);
  const csrfCookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const signIn = await fetch(`${base}/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ username: 'demo', password, _csrf: csrf }),
  });
  assert.equal(signIn.status, 303);
  // The demo has published posts in two categories, written in Chinese as most members read it.
  const home = await (await fetch(`${base}/`)).text();
  assert.match(home, /公告/);
  assert.match(home, /摄影/);
  assert.match(home, /欢迎来到社区/);
  assert.doesNotMatch(home, /未完成的想法/, 'the draft is not public');
  // The demo app's credentials sit beside the database, readable by the operator only, and so do
  // the database and its log (INTERFACE section 8).
  for (const file of ['demo-credentials.json', 'svc.sqlite', 'svc.sqlite-wal', 'svc.sqlite-shm', 'svc.sqlite-migration']) {
    assert.equal(statSync(join(dirname(path), file)).mode & 0o777, 0o600, file);
  }

  // A request in flight when SIGTERM arrives is finished, then the process exits 0.
  const inFlight = fetch(`${base}/`);
  const exited = stop(service);
  assert.equal((await inFlight).status, 200);
  assert.equal(await exited, 0);
});

test('a second start on the same database does not seed again, and says where the demo credentials are kept', async () => {
  const path = temporarySqlitePath();
  const env = { DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: 'warn' };
  for (let i = 0; i < 2; i++) {
    const service = startService({ ...env, PORT: String(await freePort()) });
    const banner = await service.banner;
    if (i === 0) assert.match(banner, /client_secret=svcs_/);
    else {
      assert.doesNotMatch(banner, /svcs_/, 'a secret is printed once');
      assert.match(banner, /Demo sign-in: +demo \/ password \(in .*demo-credentials\.json\)/);
    }
    await stop(service);
  }
  assert.deepEqual(await usernames(path), ['demo', 'mara', 'theo', 'lin', 'sam', 'ines'], 'the demo user and the members who comment, once');
});

test('a start on a database migrated but never seeded (its first start killed between the two) seeds the demo', async () => {
  const path = temporarySqlitePath();
  // What a first start killed after its migrations committed leaves: the schema, no account.
  assert.equal(svc(`sqlite:${path}`, ['migrate', '--json']).code, 0);
  const service = startService({ DATABASE_URL: `sqlite:${path}`, PORT: String(await freePort()), LOG_LEVEL: 'warn' });
  try {
    const banner = await service.banner;
    assert.match(banner, /Demo sign-in: +demo \/ (?!password \()\S+/, 'the demo\'s password, printed as at a first start');
    assert.match(banner, /client_secret=svcs_/);
    assert.ok(readFileSync(join(dirname(path), 'demo-credentials.json'), 'utf8').includes('"password"'));
  } finally {
    await stop(service);
  }
  assert.deepEqual(await usernames(path), ['demo', 'mara', 'theo', 'lin', 'sam', 'ines']);
});

test('a start with the demo on finds an operator\'s account and seeds nothing beside it', async () => {
  const path = temporarySqlitePath();
  const admin = svc(`sqlite:${path}`, ['user', 'create', '--username', 'admin', '--password-stdin', '--json'], {}, 'the admin password\n');
  assert.equal(admin.code, 0, admin.stderr);
  // Without the demo the banner has no "Developer docs:" line for `startService` to wait for.
  const service = fromSources({ DATABASE_URL: `sqlite:${path}`, PORT: String(await freePort()), LOG_LEVEL: 'warn' });
  try {
    assert.doesNotMatch(await service.waitFor(/Listening on[\s\S]*\n$/), /Demo sign-in|No accounts yet/);
  } finally {
    await stop(service);
  }
  assert.deepEqual(await usernames(path), ['admin']);
});

test('kept demo credentials that name a client the database does not have (a seed that never committed, a database replaced) are neither shown nor used by the demo app', async () => {
  const { path, env } = await seededByAFirstStart();
  const file = join(dirname(path), 'demo-credentials.json');
  const kept = JSON.parse(readFileSync(file, 'utf8')) as { confidentialClient: { clientId: string } };
  kept.confidentialClient.clientId = 'a-client-this-database-does-not-have';
  writeFileSync(file, JSON.stringify(kept), { mode: 0o600 });
  const port = await freePort();
  const service = fromSources({ ...env, PORT: String(port) });
  try {
    assert.doesNotMatch(await service.waitFor(/Listening on[\s\S]*\n$/), /Demo sign-in|a-client-this-database-does-not-have/);
    assert.match(await (await fetch(`http://localhost:${port}/demo-app`)).text(), /The demo app has no client credentials/);
  } finally {
    await stop(service);
  }
});

test('kept demo credentials of another shape (a field missing or not text) are ignored: the start serves without them, and says so in one line', async () => {
  const { path, env } = await seededByAFirstStart();
  const file = join(dirname(path), 'demo-credentials.json');
  const keptText = readFileSync(file, 'utf8');
  const kept = JSON.parse(keptText) as Record<string, unknown>;
  const ignored = (why: string) => new RegExp(`Warning: the kept demo credentials in \\S*demo-credentials\\.json are ignored: ${why}[^\\n]*\\. The banner and the demo app go without them\\.\n`);
  const reshapes = [{ ...kept, username: undefined }, { ...kept, username: 5 }, { ...kept, confidentialClient: null }, [], 'text'].map((reshaped) => JSON.stringify(reshaped));
  for (const [text, why] of [...reshapes.map((text) => [text, 'it is not what a start writes']), [keptText.slice(0, 40), 'it is not JSON']] as const) {
    writeFileSync(file, text, { mode: 0o600 });
    const service = fromSources({ ...env, PORT: String(await freePort()) });
    try {
      const output = await service.waitFor(/Listening on[\s\S]*\n$/);
      assert.doesNotMatch(output, /Demo sign-in/);
      assert.match(output, ignored(why), text);
    } finally {
      assert.equal(await stop(service), 0, text);
    }
  }
  writeFileSync(file, keptText, { mode: 0o600 });
  const service = startService({ ...env, PORT: String(await freePort()) });
  try {
    assert.doesNotMatch(await service.banner, /Warning/);
  } finally {
    await stop(service);
  }
});

test('a demo account since suspended or deleted is not offered as a sign-in: the banner says its status, and the demo app is still shown', async () => {
  const { path, env } = await seededByAFirstStart();
  for (const status of ['suspended', 'deleted']) {
    const changed = svc(`sqlite:${path}`, ['user', 'set-status', '--username', 'demo', '--status', status, '--reason', 'a test', '--json']);
    assert.equal(changed.code, 0, changed.stderr);
    const service = startService({ ...env, PORT: String(await freePort()) });
    try {
      const banner = await service.banner;
      assert.match(banner, new RegExp(`Demo sign-in: +none: the demo account is ${status}`));
      assert.doesNotMatch(banner, /demo \/ password/);
      assert.match(banner, /Demo app: +http:\/\/localhost:\d+\/demo-app/);
    } finally {
      await stop(service);
    }
  }
});

test('a demo password set again since the seed is not offered as the kept one: the banner says the kept one may no longer work', async () => {
  const { path, env } = await seededByAFirstStart();
  const changed = svc(`sqlite:${path}`, ['user', 'set-password', '--username', 'demo', '--password-stdin', '--json'], {}, 'another-long-password-1\n');
  assert.equal(changed.code, 0, changed.stderr);
  const service = startService({ ...env, PORT: String(await freePort()) });
  try {
    const banner = await service.banner;
    assert.match(banner, /Demo sign-in: +demo \/ its password was set again since the demo was seeded: the one kept in .*demo-credentials\.json may no longer work/);
    assert.doesNotMatch(banner, /demo \/ password \(in/);
  } finally {
    await stop(service);
  }
});

test('a demo seeded with earlier argon2id parameters is still offered with its kept password after a sign-in replaced its hash with one of today\'s', async () => {
  const { path, env } = await seededByAFirstStart();
  // As a seed before decision 66 left it: the kept password hashed with 19 MiB and two passes,
  // and the digest of that hash in the kept file.
  const file = join(dirname(path), 'demo-credentials.json');
  const kept = JSON.parse(readFileSync(file, 'utf8')) as { password: string; passwordHashDigest: string };
  const earlier = await hash(kept.password, { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
  const db = openDatabase({ kind: 'sqlite', path });
  try {
    await db.db.updateTable('users').set({ password_hash: earlier }).where('username', '=', 'demo').execute();
  } finally {
    await db.close();
  }
  writeFileSync(file, JSON.stringify({ ...kept, passwordHashDigest: createHash('sha256').update(earlier).digest('hex') }), { mode: 0o600 });
  const port = await freePort();
  const first = startService({ ...env, PORT: String(port) });
  try {
    assert.match(await first.banner, /Demo sign-in: +demo \/ password \(in/);
    await signIn(new CookieJar(), `http://localhost:${port}`, 'demo', kept.password);
  } finally {
    await stop(first);
  }
  const second = startService({ ...env, PORT: String(port) });
  try {
    const banner = await second.banner;
    assert.match(banner, /Demo sign-in: +demo \/ password \(in .*demo-credentials\.json\)/, 'the kept password still signs in');
    assert.doesNotMatch(banner, /set again/);
  } finally {
    await stop(second);
  }
});

test('a start at another address than the demo was seeded for moves the demo app there: its sign-in comes back to this start', async () => {
  const { path, env } = await seededByAFirstStart();
  const port = await freePort();
  const callback = `http://localhost:${port}/demo-app/callback`;
  const service = startService({ ...env, PORT: String(port) });
  try {
    assert.match(await service.banner, new RegExp(`redirect_uri=${callback}`));
    const login = await fetch(`http://localhost:${port}/demo-app/login`, { redirect: 'manual' });
    assert.equal(new URL(login.headers.get('location')!).searchParams.get('redirect_uri'), callback);
  } finally {
    await stop(service);
  }
  const kept = JSON.parse(readFileSync(join(dirname(path), 'demo-credentials.json'), 'utf8')) as { confidentialClient: { redirectUri: string; postLogoutRedirectUri: string } };
  assert.deepEqual([kept.confidentialClient.redirectUri, kept.confidentialClient.postLogoutRedirectUri], [callback, `http://localhost:${port}/demo-app/signed-out`]);
  const db = openDatabase({ kind: 'sqlite', path });
  try {
    const clients = await db.db.selectFrom('clients').select(['name', 'homepage_url', 'redirect_uris', 'post_logout_redirect_uris', 'backchannel_logout_uri']).orderBy('name').execute();
    assert.deepEqual(clients.map((c) => [c.name, c.homepage_url, JSON.parse(c.redirect_uris), JSON.parse(c.post_logout_redirect_uris), c.backchannel_logout_uri]), [
      ['Demo App', `http://localhost:${port}/demo-app`, [callback], [`http://localhost:${port}/demo-app/signed-out`], `http://localhost:${port}/demo-app/backchannel-logout`],
      ['Demo CLI', '', ['http://127.0.0.1/callback', callback], [], null],
    ]);
  } finally {
    await db.close();
  }
});

test('a start that cannot listen moves nothing: the demo app stays where the instance that serves it has it', async () => {
  const { path, env } = await seededByAFirstStart();
  const file = join(dirname(path), 'demo-credentials.json');
  const addresses = async () => {
    const db = openDatabase({ kind: 'sqlite', path });
    try {
      return await db.db.selectFrom('clients').select(['homepage_url', 'redirect_uris', 'post_logout_redirect_uris', 'backchannel_logout_uri']).orderBy('name').execute();
    } finally {
      await db.close();
    }
  };
  const [keptBefore, before] = [readFileSync(file, 'utf8'), await addresses()];
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const service = fromSources({ ...env, PORT: String((taken.address() as AddressInfo).port) });
    assert.equal(await service.exited, 1);
    assert.match(service.output(), /cannot listen on .*EADDRINUSE/);
  } finally {
    taken.close();
  }
  assert.equal(readFileSync(file, 'utf8'), keptBefore);
  assert.deepEqual(await addresses(), before);
});

test('a move that fails once the server listens costs the demo\'s move, not the service: a warning, and the server goes on serving', async () => {
  const { path, env } = await seededByAFirstStart();
  const file = join(dirname(path), 'demo-credentials.json');
  const keptBefore = readFileSync(file, 'utf8');
  // What a database held past the move's waits does to it (another start's turn, a long write).
  const db = openDatabase({ kind: 'sqlite', path });
  await sql`create trigger held before update on clients begin select raise(abort, 'database is locked'); end`.execute(db.db);
  await db.close();
  const port = await freePort();
  const service = fromSources({ ...env, PORT: String(port) });
  try {
    await service.waitFor(/Listening on/);
    assert.match(service.output(), /Warning: the demo app was not moved to http:\/\/localhost:\d+\/demo-app: .*database is locked.*\. The next start moves it\./);
    assert.equal((await fetch(`http://localhost:${port}/`)).status, 200);
  } finally {
    assert.equal(await stop(service), 0);
  }
  assert.equal(readFileSync(file, 'utf8'), keptBefore);
});

test('two starts at once on a new SQLite file take turns to migrate: both serve, and the demo is seeded once', async () => {
  const path = temporarySqlitePath();
  const env = { DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: 'warn' };
  const services = [startService({ ...env, PORT: String(await freePort()) }), startService({ ...env, PORT: String(await freePort()) })];
  try {
    const banners = await Promise.all(services.map((service) => service.banner));
    assert.equal(banners.filter((banner) => /client_secret=svcs_/.test(banner)).length, 1, 'one start seeded the demo and printed its secret');
  } finally {
    await Promise.all(services.map(stop));
  }
  assert.deepEqual(await usernames(path), ['demo', 'mara', 'theo', 'lin', 'sam', 'ines']);
});

test('a bad setting stops the start with one line naming it, and creates nothing', () => {
  const path = temporarySqlitePath();
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DATABASE_URL: `sqlite:${path}`, PORT: 'eighty' },
  });
  assert.equal(result.status, 2);
  assert.equal(result.stderr, 'invalid setting PORT="eighty": accepts an integer from 0 to 65535\n');
  assert.equal(spawnSync('test', ['-e', path]).status, 1, 'no database file was created');
});

test('a bad setting\'s value is quoted on its one line, a quote in it doubled, its invisible characters and backslashes escaped once', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: HOSTILE_PORT },
  });
  assert.equal(result.status, 2);
  assert.equal(result.stderr, `invalid setting PORT=${HOSTILE_PORT_SHOWN}: accepts an integer from 0 to 65535\n`);
});

test('a SQLite path whose directory cannot be made stops the start and the command line at once: one line, exit 1', { timeout: 90_000 }, () => {
  compiled();
  // /proc makes no directory: Node's recursive mkdir looped there for ever at full CPU. Each
  // process is given 20 s, so a loop fails this test instead of hanging the suite.
  const env = { PATH: process.env.PATH ?? '', DATABASE_URL: 'sqlite:/proc/nope/x.sqlite', LOG_LEVEL: 'warn' };
  for (const args of [['--import', 'tsx', 'src/main.ts'], ['dist/cli/main.js', 'user', 'list', '--json']]) {
    const result = spawnSync(process.execPath, args, { encoding: 'utf8', env, timeout: 20_000, killSignal: 'SIGKILL' });
    assert.equal(result.signal, null, `${args.join(' ')} did not end within 20 s`);
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^(failed to start|svc: failed): cannot create the directory of the SQLite database, \/proc\/nope: mkdir \/proc\/nope: ENOENT: no such file or directory\n$/);
  }
});

test('METRICS_PORT serves /metrics apart from the public port, where it is not found', async () => {
  const path = temporarySqlitePath();
  const [port, metricsPort] = await twoFreePorts();
  const service = startService({ DATABASE_URL: `sqlite:${path}`, PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'warn' });
  assert.match(await service.banner, new RegExp(`Metrics on http://127\\.0\\.0\\.1:${metricsPort}/metrics`));
  await fetch(`http://127.0.0.1:${port}/healthz`);
  assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404);
  assert.match(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), /http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
  assert.equal(await stop(service), 0);
});

test('WORKERS=2 serves from two worker processes on one port, their metrics merged on METRICS_PORT, and stops them all on SIGTERM', async () => {
  const path = temporarySqlitePath();
  const [port, metricsPort] = await twoFreePorts();
  const service = startService({ DATABASE_URL: `sqlite:${path}`, PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info', WORKERS: '2' });
  const banner = await service.banner;
  assert.match(banner, /2 workers/);
  assert.match(banner, /Warning: without REDIS_URL each of the 2 workers counts rate limits and sign-in failures on its own/);
  for (let i = 0; i < 10; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  assert.match(metrics, /http_requests_total\{method="GET",route="\/healthz",status="200"\} 10/, 'the workers\' counts add up');
  // Each worker logs with its own pid; both must have started a server.
  const started = service.output().match(/"pid":(\d+)[^\n]*Server listening/g) ?? [];
  assert.equal(new Set(started.map((line) => /"pid":(\d+)/.exec(line)![1])).size, 2);
  assert.equal(await stop(service), 0);
});

onPostgres('WORKERS=2, a signal while the primary moves the kept demo app', (database) => {
  const outside = outsideConnection(database);
  test('prints no banner: the workers are stopping, and nothing should invite a visit (attack138 F8)', { timeout: 90_000 }, async () => {
    compiled();
    const file = await keptDemoFile(database.url);
    const env = { DATABASE_URL: database.url, DEMO: '1', LOG_LEVEL: 'warn' };
    try {
      const first = run(process.execPath, [SERVICE_ENTRY], { ...env, PORT: String(await freePort()) });
      await first.waitFor(/Developer docs:/);
      assert.equal(await stop(first), 0);
      // Another port: the primary moves the demo app there once the workers serve, and waits on its client's row.
      const holder = outside();
      await holder.query('begin');
      const { clientId } = (JSON.parse(readFileSync(file, 'utf8')) as { confidentialClient: { clientId: string } }).confidentialClient;
      await holder.query('select 1 from clients where client_id = $1 for update', [clientId]);
      const second = run(process.execPath, [SERVICE_ENTRY], { ...env, PORT: String(await freePort()), WORKERS: '2' });
      try {
        await untilWaitedOn(holder, 60_000);
        // A worker that cannot end yet holds the primary past the move (until the grace kills it).
        process.kill(descendants(second.child.pid!)[0]!, 'SIGSTOP');
        second.child.kill('SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        await holder.query('rollback');
      }
      assert.equal(await second.exited, 1, second.output());
      assert.doesNotMatch(second.output(), /Listening on/);
    } finally {
      rmSync(file, { force: true });
    }
  });
});

// What a process manager does: signal the process it started, which is npm. npm hands the start
// over to node (`exec`), so the signal reaches the server and nothing is left running.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to the npm start process stops the server and leaves no process behind`, async () => {
    compiled();
    const path = temporarySqlitePath();
    const port = await freePort();
    const npm = run('npm', ['start'], { DATABASE_URL: `sqlite:${path}`, PORT: String(port), LOG_LEVEL: 'warn' });
    await npm.waitFor(/Listening on/);
    const tree = descendants(npm.child.pid!);
    try {
      assert.ok(tree.length > 0, 'npm started the server');
      const server = tree.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).find((words) => words.includes(SERVICE_ENTRY));
      assert.deepEqual(server?.slice(1, -2), serviceNodeFlags(`sqlite:${path}`), 'the server runs with the flags of the embedded database');
      assert.equal(await answers(port), true);
      npm.child.kill(signal);
      assert.equal(await npm.exited, 0, npm.output());
      assert.equal(await answers(port), false, 'the port no longer answers');
      assert.deepEqual(tree.filter(isAlive), [], 'no process npm started is left');
    } finally {
      // A server left behind would keep this test's pipes, and the run, open.
      for (const pid of tree.filter(isAlive)) process.kill(pid, 'SIGKILL');
    }
  });
}

forEachDatabase('a start on a database without accounts', (database) => {
  test('prints the next steps, whose commands work as printed, and stops printing them once there is an account; a later start with the demo on does not seed it', async () => {
    compiled();
    const start = async (demo = '0') => {
      const port = await freePort();
      const server = run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: database.url, PORT: String(port), DEMO: demo, LOG_LEVEL: 'warn' });
      const banner = await server.waitFor(/Listening on[\s\S]*\n$/).finally(() => server.child.kill('SIGTERM'));
      assert.equal(await server.exited, 0);
      return { banner, port };
    };
    const { banner, port } = await start();
    assert.match(banner, /No accounts yet\. Next steps/);
    assert.match(banner, new RegExp(`Point the app at http://localhost:${port}/\\.well-known/openid-configuration`));
    // The database is no longer new once a start has prepared it: a later start with the demo on
    // does not put the demo where the first start was told to leave it out (attack68).
    const withDemo = (await start('1')).banner;
    assert.match(withDemo, /No accounts yet\. Next steps/);
    assert.doesNotMatch(withDemo, /Demo sign-in/);
    // It says why there is no demo, and how to add it.
    assert.match(withDemo, /No demo: a start seeds it only on a new database[\s\S]*To add it: npm run --silent svc -- demo\n/);
    assert.doesNotMatch(banner, /No demo/, 'with the demo off, nothing about it');
    const commands = [...banner.matchAll(/^ {7}npm run --silent svc -- (.+)$/gm)].map((m) => m[1]!);
    assert.equal(commands.length, 2, banner);
    // The printed commands, as an operator would type them: words, with "My App" quoted.
    const words = (line: string) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const user = svc(database.url, [...words(commands[0]!), '--password-stdin', '--json'], {}, 'the admin password\n');
    assert.equal(user.code, 0, user.stderr);
    assert.equal(user.json.username, 'admin');
    const client = svc(database.url, [...words(commands[1]!), '--json']);
    assert.equal(client.code, 0, client.stderr);
    assert.equal(client.json.type, 'confidential');
    assert.doesNotMatch((await start()).banner, /Next steps/);
  });
});

forEachDatabase('instances started together on a new database with the demo', (database) => {
  // PostgreSQL, where instances on several machines start together: the start that made the
  // database seeds the demo in the migrations' turn, and the other waits for it. SQLite's turn is
  // tested above ("two starts at once"), from the sources.
  // Registered on PostgreSQL only, so that no test is skipped on CI.
  if (database.name === 'sqlite') return;
  test('the instance that does not seed the demo finds it seeded, and neither prints the next steps of a database without accounts', async () => {
    compiled();
    // The compiled service starts in well under a second, so both reach the database together.
    const ports = await twoFreePorts();
    const starts = ports.map((port) => run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: database.url, PORT: String(port), DEMO: '1', LOG_LEVEL: 'warn' }));
    try {
      const banners = await Promise.all(starts.map((start) => start.waitFor(/Listening on[\s\S]*\n$/)));
      for (const banner of banners) assert.doesNotMatch(banner, /No accounts yet/, banner);
      // Each names the schema its tables are in.
      for (const banner of banners) assert.match(banner, new RegExp(`\\(database: postgres, schema "${new URL(database.url).searchParams.get('options')!.replace('-c search_path=', '')}"\\)`));
      assert.equal(banners.filter((banner) => /Demo sign-in: +demo \/ (?!password \()\S+/.test(banner)).length, 1, 'one of them seeded the demo, and printed its password');
    } finally {
      await Promise.all(starts.map(stop));
      if (database.name === 'postgres') {
        rmSync(await keptDemoFile(database.url), { force: true });
      }
    }
  });
});
