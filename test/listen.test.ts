/**
 * What the compiled server does when it cannot listen, and when a stop cannot finish: one line an
 * operator can act on and the exit code the README gives (1: a failed start, which a process
 * manager retries; HOST and METRICS_PORT values that can never work are settings, exit 2, tested
 * in test/config/settings.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type Server, connect, createServer } from 'node:net';
import { test } from 'node:test';
import { onPostgres, outsideConnection, temporarySqlitePath } from './support/databases.js';
import { freePort } from './support/instances.js';
import { compiled, descendants, run, SERVICE_ENTRY } from './support/processes.js';
import { createBaseDeps } from '../src/base-deps.js';
import { loadSettings } from '../src/config/settings.js';
import { NO_AUDIT } from '../src/core/audit.js';
import { prepareStart } from '../src/deps.js';

/** A port some other process listens on, for as long as the test holds it. */
function takenPort(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, server }));
  });
}

function start(env: Record<string, string>) {
  compiled();
  return run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: `sqlite:${temporarySqlitePath()}`, LOG_LEVEL: 'warn', DEMO: '0', ...env });
}

test('a start that cannot listen says which HOST and port and why in one line, and exits 1', { timeout: 120_000 }, async () => {
  const taken = await takenPort();
  try {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: String(taken.port) }, `failed to start: cannot listen on HOST=127.0.0.1 PORT=${taken.port}: another process listens on that port (EADDRINUSE)\n`],
      [{ PORT: String(await freePort()), METRICS_PORT: String(taken.port) }, `failed to start: cannot listen on HOST=127.0.0.1 METRICS_PORT=${taken.port}: another process listens on that port (EADDRINUSE)\n`],
      // TEST-NET-2 (RFC 5737): an address no machine here has.
      [{ PORT: '3999', HOST: '198.51.100.77' }, 'failed to start: cannot listen on HOST=198.51.100.77 PORT=3999: this machine has no such address, or not yet (EADDRNOTAVAIL)\n'],
      [{ PORT: '3999', HOST: 'no-such-host.invalid' }, 'failed to start: cannot listen on HOST=no-such-host.invalid PORT=3999: the host name does not resolve (ENOTFOUND)\n'],
    ];
    for (const [env, line] of cases) {
      const server = start(env);
      assert.equal(await server.exited, 1, JSON.stringify(env));
      // The public server's own log line may come first when only the metrics port fails.
      assert.equal(server.output().replace(/^\{.*\}\n/gm, ''), line, JSON.stringify(env));
    }
  } finally {
    taken.server.close();
  }
});

test('WORKERS=2 on a port that is taken fails the start once (exit 1), instead of forking workers that fail for ever', { timeout: 60_000 }, async () => {
  const taken = await takenPort();
  try {
    const server = start({ PORT: String(taken.port), WORKERS: '2' });
    const exited = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000))]);
    if (exited !== 1) server.child.kill('SIGKILL');
    assert.equal(exited, 1, server.output());
    assert.doesNotMatch(server.output(), /starting another/);
    assert.match(server.output(), new RegExp(`^failed to start: cannot listen on HOST=127\\.0\\.0\\.1 PORT=${taken.port}: another process listens on that port \\(EADDRINUSE\\)\\n`));
    assert.match(server.output(), /\nworker \d+ exited \(1\) before every worker listened; stopping the others\n/);
  } finally {
    taken.server.close();
  }
});

test('a stop that cuts off a request still in flight 10 s after the signal says so in the log, then exits 1', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const server = start({ PORT: String(port), LOG_LEVEL: 'info' });
  await server.waitFor(/Listening on /, 30_000);
  // A request whose body never finishes arriving (the server gives it 30 s): still in flight.
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write('POST /api/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 1);
  assert.ok(Date.now() - signalled >= 9_500, 'after the 10 s grace');
  socket.destroy();
  const lines = server.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string });
  const last = lines.at(-1)!;
  assert.equal(last.level, 50);
  assert.equal(last.msg, 'requests still in flight 10 s after the signal were cut off; exiting with code 1');
});

for (const workers of ['1', '2']) {
  test(`WORKERS=${workers}: connections that carry no request, silent or with half a request's headers, on PORT or METRICS_PORT, do not hold the stop: exit 0 (attack143)`, { timeout: 60_000 }, async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const server = start({ PORT: String(port), METRICS_PORT: String(metricsPort), WORKERS: workers });
    await server.waitFor(/Listening on /, 60_000);
    // A browser's preconnect, a TCP probe, a client that stalls: held, each would cut the stop off at its grace, exit 1.
    const sockets = [port, metricsPort].flatMap((to) => ['', 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n'].map((sent) => {
      const socket = connect(to, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(sent);
      return socket;
    }));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
}

/** How many whole answers, each a 200 with its `Content-Length`, `bytes` holds from its start. */
function wholeAnswers(bytes: Buffer): number {
  let count = 0;
  for (let at = 0; ; count++) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) return count;
    const head = bytes.subarray(at, headEnd).toString('latin1');
    assert.match(head, /^HTTP\/1\.1 200 [^]*\r\ncontent-length: \d+/i);
    const end = headEnd + 4 + Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]);
    if (end > bytes.length) return count;
    at = end;
  }
}

test('a stop sends whole the answers made but not yet read: fifty pipelined pages, read only after the signal, all arrive, and the stop exits 0 (attack145)', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const server = start({ PORT: String(port) });
  await server.waitFor(/Listening on /, 30_000);
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  // Unread, the answers (about 150 KB each) fill the kernel's buffers, then wait in the server's.
  socket.pause();
  socket.write('GET /docs HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(50));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  server.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.resume();
  await closed;
  assert.equal(await server.exited, 0, server.output());
  assert.equal(wholeAnswers(Buffer.concat(received)), 50);
});

test('WORKERS=2: a replacement refused before it listens (the shared keys sealed since by an instance given KEYS_SECRET) says why and is tried again after a wait that doubles, while the other worker serves', { timeout: 90_000 }, async () => {
  const port = await freePort();
  const databaseUrl = `sqlite:${temporarySqlitePath()}`;
  const server = start({ DATABASE_URL: databaseUrl, PORT: String(port), WORKERS: '2', LOG_LEVEL: 'info' });
  try {
    await server.waitFor(/Listening on /, 60_000);
    // An instance given KEYS_SECRET starts: it seals what is stored, and these workers keep the keys they read.
    const sealing = createBaseDeps(loadSettings({ DATABASE_URL: databaseUrl, DEMO: '0', KEYS_SECRET: 'k'.repeat(32) }), { audit: NO_AUDIT });
    try {
      await prepareStart(sealing);
    } finally {
      await sealing.close();
    }
    const [worker] = descendants(server.child.pid!);
    process.kill(worker!, 'SIGKILL');
    await server.waitFor(/starting another in 2 s\n/, 30_000);
    const waitBegan = Date.now();
    await server.waitFor(/starting another in 4 s\n/, 30_000);
    // A lower bound: a slow machine only makes the try take longer.
    assert.ok(Date.now() - waitBegan >= 2_000, 'the second try came after its 2 s wait');
    // Three when the killed worker had served 10 s before it died (a slow machine): its replacement then went at once.
    const tries = server.output().split('\n').filter((line) => line.startsWith('failed to start: '));
    assert.ok(tries.length >= 2, server.output());
    for (const line of tries) assert.match(line, /^failed to start: the server HMAC secrets [^\n]* cannot be opened \(server_secrets\.value, row [a-z-]+\): it is sealed and KEYS_SECRET is not set/);
    assert.match(server.output(), /exited \(1\) before it listened; starting another in 2 s\n[^]*exited \(1\) before it listened; starting another in 4 s\n/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, 'the other worker serves');
  } finally {
    server.child.kill('SIGTERM');
  }
  assert.equal(await server.exited, 0, 'a stop while the next try waits ends the primary');
});

/** The worker of `server` the primary forked last, not `known` yet, once it listens (its own log line). */
async function nextWorker(server: ReturnType<typeof start>, known: Set<number>): Promise<number> {
  let pid: number | undefined;
  while (pid === undefined) {
    pid = descendants(server.child.pid!).find((child) => !known.has(child));
    if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  known.add(pid);
  await server.waitFor(new RegExp(`"pid":${pid},[^\\n]*"msg":"Server listening at `), 60_000);
  return pid;
}

/** Kills `worker` of `server` and waits for the primary's line about it, ending `then`. */
async function killWorker(server: ReturnType<typeof start>, worker: number, then: string): Promise<void> {
  process.kill(worker, 'SIGKILL');
  // The primary may hear of its listening after its log line: either way, it died soon.
  await server.waitFor(new RegExp(`worker ${worker} exited \\(SIGKILL\\)( before it listened)?; ${then}`), 30_000);
}

test('WORKERS=2: a worker that dies soon after it listened is replaced at once, its replacement dying as soon after waits 2 s then 4 s, and one that served 10 s is replaced at once again, its replacement dying soon waiting 2 s', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const server = start({ PORT: String(port), WORKERS: '2', LOG_LEVEL: 'info' });
  try {
    await server.waitFor(/Listening on /, 60_000);
    const known = new Set(descendants(server.child.pid!));
    let worker = [...known][0]!;
    for (const then of ['starting another\n', 'starting another in 2 s\n', 'starting another in 4 s\n']) {
      await killWorker(server, worker, then);
      worker = await nextWorker(server, known);
    }
    // Served 10 s: a chance death, not a crash that lasts.
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    await killWorker(server, worker, 'starting another\n');
    await killWorker(server, await nextWorker(server, known), 'starting another in 2 s\n');
    await nextWorker(server, known);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
  } finally {
    server.child.kill('SIGTERM');
  }
  assert.equal(await server.exited, 0);
});

test('WORKERS=2: a stop while a replacement waits its turn forks none, even while a request in flight keeps the primary running', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const server = start({ PORT: String(port), WORKERS: '2', LOG_LEVEL: 'info' });
  await server.waitFor(/Listening on /, 60_000);
  const known = new Set(descendants(server.child.pid!));
  const [first] = known;
  await killWorker(server, first!, 'starting another\n');
  await killWorker(server, await nextWorker(server, known), 'starting another in 2 s\n');
  // To the worker left, a request whose body never finishes arriving: it holds the stop up to 10 s.
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write('POST /api/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=');
  await new Promise((resolve) => setTimeout(resolve, 300));
  server.child.kill('SIGTERM');
  // Past the 2 s wait, while the stop waits for the request.
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  const forkedAfter = descendants(server.child.pid!).filter((child) => !known.has(child));
  socket.destroy();
  await server.exited;
  assert.deepEqual(forkedAfter, [], server.output());
});

test('WORKERS=2: a worker still running 10 s after the signal is killed, not left behind, and the primary exits 1 saying so', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const server = start({ PORT: String(port), WORKERS: '2' });
  await server.waitFor(/Listening on /, 60_000);
  const [stuck, other] = descendants(server.child.pid!);
  // Stopped: it cannot answer the signal, as a worker in a busy loop would not.
  process.kill(stuck!, 'SIGSTOP');
  try {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 1);
    assert.match(server.output(), /workers still running 10 s after the signal were cut off; exiting with code 1\n/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Gone, or dead and waiting for init to reap it (a zombie, state Z): no longer running.
    const alive = (pid: number) => { try { return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; } };
    assert.equal(alive(stuck!), false, 'the stuck worker is gone');
    assert.equal(alive(other!), false);
  } finally {
    // Left behind, it would hold the test's pipes open.
    for (const pid of [stuck!, other!]) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
});

/**
 * Runs `body` on a WORKERS=2 server with METRICS_PORT once it listens, stops it, and asserts a
 * clean exit; `scrape` reads its /metrics.
 */
async function onMetricsWorkers(body: (server: ReturnType<typeof start>, scrape: () => Promise<Response>) => Promise<void>): Promise<void> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const server = start({ PORT: String(port), METRICS_PORT: String(metricsPort), WORKERS: '2' });
  try {
    await server.waitFor(/Listening on /, 60_000);
    await body(server, () => fetch(`http://127.0.0.1:${metricsPort}/metrics`));
  } finally {
    server.child.kill('SIGTERM');
  }
  assert.equal(await server.exited, 0, server.output());
}

test('WORKERS=2 with METRICS_PORT: scrapes in the moments a worker is killed answer 200 with the other worker\'s series, never waiting for the dead one (attack139 #3)', { timeout: 60_000 }, () => onMetricsWorkers(async (server, scrape) => {
  process.kill(descendants(server.child.pid!)[0]!, 'SIGKILL');
  // From the kill on, before and after the primary hears of the exit: some reach the dead worker's pipe.
  const scrapes: Array<Promise<{ status: number; text: string }>> = [];
  for (let i = 0; i < 15; i++) {
    scrapes.push(scrape().then(async (response) => ({ status: response.status, text: await response.text() })));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const { status, text } of await Promise.all(scrapes)) {
    assert.equal(status, 200, text);
    assert.match(text, /^process_cpu_user_seconds_total \d/m);
  }
}));

test('WORKERS=2 with METRICS_PORT: a worker that does not answer makes the scrape a 503 naming it, and the next scrape after it goes on a 200', { timeout: 60_000 }, () => onMetricsWorkers(async (server, scrape) => {
  const silent = descendants(server.child.pid!)[0]!;
  process.kill(silent, 'SIGSTOP');
  try {
    const stalled = await scrape();
    assert.equal(stalled.status, 503);
    assert.equal(stalled.headers.get('retry-after'), '1');
    assert.equal(await stalled.text(), `metrics unavailable: no answer within 5 s from worker ${silent}\n`);
  } finally {
    process.kill(silent, 'SIGCONT');
  }
  const after = await scrape();
  assert.equal(after.status, 200, await after.text());
}));

test('WORKERS=2 with METRICS_PORT: a scrape waiting on a worker that then dies answers 200 with the other worker\'s series, not after the 5 s wait', { timeout: 60_000 }, () => onMetricsWorkers(async (server, scrape) => {
  const dying = descendants(server.child.pid!)[0]!;
  // Stopped, it holds the question unanswered; the scrape waits for it until it is killed.
  process.kill(dying, 'SIGSTOP');
  const scraped = scrape();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await killWorker(server, dying, 'starting another\n');
  const response = await scraped;
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(text, /^process_cpu_user_seconds_total \d/m);
}));

test('WORKERS=2 with METRICS_PORT: a scrape in flight when the primary stops gets its answer before the primary exits 0', { timeout: 60_000 }, () => onMetricsWorkers(async (server, scrape) => {
  const [held, other] = descendants(server.child.pid!);
  // Stopped, it holds the scrape's question unanswered through the stop, until it is killed.
  process.kill(held!, 'SIGSTOP');
  const scraped = scrape();
  await new Promise((resolve) => setTimeout(resolve, 500));
  server.child.kill('SIGTERM');
  while (descendants(server.child.pid!).includes(other!)) await new Promise((resolve) => setTimeout(resolve, 50));
  // The last worker's exit both settles the question and ends the stop: the answer comes first.
  process.kill(held!, 'SIGKILL');
  const response = await scraped;
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(text, /^process_cpu_user_seconds_total \d/m);
  // RFC 9112 9.6: its client sends its next scrape on a new connection, not down this closing one.
  assert.equal(response.headers.get('connection'), 'close');
}));

onPostgres('WORKERS=2 with METRICS_PORT, a replacement worker held before it listens', (database) => {
  const outside = outsideConnection(database);
  test('/metrics answers 200 with the serving worker\'s series, not waiting for the replacement (attack138 F3)', { timeout: 60_000 }, async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const server = start({ DATABASE_URL: database.url, PORT: String(port), METRICS_PORT: String(metricsPort), WORKERS: '2' });
    try {
      await server.waitFor(/Listening on /, 60_000);
      const holder = outside();
      // The shared keys a worker reads before it listens: its replacement waits on them.
      await holder.query('begin');
      await holder.query('lock table server_secrets in access exclusive mode');
      try {
        await killWorker(server, descendants(server.child.pid!)[0]!, 'starting another\n');
        const waiting = async () => (await holder.query<{ n: number }>(`select count(*)::int as n from pg_locks where not granted and relation = 'server_secrets'::regclass`)).rows[0]!.n;
        while (await waiting() === 0) await new Promise((resolve) => setTimeout(resolve, 50));
        const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        const text = await scrape.text();
        assert.equal(scrape.status, 200, text);
        assert.match(text, /^process_cpu_user_seconds_total \d/m);
      } finally {
        await holder.query('rollback');
      }
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0);
  });
});
