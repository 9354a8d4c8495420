/**
 * A concurrent burst of wrong client secrets from one address against the compiled service with
 * REDIS_URL, as the outside attack of issue 30 sent it: the limit of failed authentications of a
 * client per address holds while the failures are still being checked (`src/core/oauth/endpoint-limits.ts`).
 * The burst is written on connections opened beforehand, so it reaches the service at once, as
 * an attacker's does; `fetch` opening a connection per request would spread it out.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { type Socket, connect } from 'node:net';
import { test } from 'node:test';
import { addressKey } from '../../src/core/addresses.js';
import { CLIENT_AUTH_CHECKS_AT_ONCE, CLIENT_AUTH_WINDOW_SECONDS } from '../../src/core/oauth/endpoint-limits.js';
import { svc } from '../support/cli.js';
import { forEachDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';
import { compiled, run, type Running, SERVICE_ENTRY } from '../support/processes.js';
import { redisUrl, skipWithoutRedis } from '../support/redis.js';

const FAILURES_PER_ADDRESS = 20;
/** Requests in the burst: several times what the rule lets be checked. */
const BURST = 600;

/** An address of the IPv6 documentation range (its own /64) no other run uses. */
function newAddress(): string {
  return `2001:db8:${randomInt(0, 0x10000).toString(16)}:${randomInt(0, 0x10000).toString(16)}::1`;
}

/** Waits out the end of the limits' window if it is near: a burst cut in two by it is counted in two windows. */
async function clearOfWindowEnd(): Promise<void> {
  const left = CLIENT_AUTH_WINDOW_SECONDS - (Math.floor(Date.now() / 1000) % CLIENT_AUTH_WINDOW_SECONDS);
  if (left < 60) await new Promise((resolve) => setTimeout(resolve, (left + 1) * 1000));
}

/** A POST of `fields` to `path` from `address` (X-Forwarded-For), the connection closed after it. */
function formRequest(port: number, path: string, fields: Record<string, string>, address: string): string {
  const body = new URLSearchParams(fields).toString();
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n`
    + `X-Forwarded-For: ${address}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Opens `count` connections, then writes `request` on all of them at once; resolves with the statuses. */
async function burst(port: number, count: number, request: string): Promise<number[]> {
  const sockets = await Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  })));
  const statuses = sockets.map((socket) => new Promise<number>((resolve, reject) => {
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => { answer += chunk; });
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0)));
    socket.on('error', reject);
  }));
  for (const socket of sockets) socket.write(request);
  return Promise.all(statuses);
}

forEachDatabase('client authentication under a burst', (database) => {
  test('a concurrent burst of wrong client secrets from one address checks at most the client\'s failures per address plus the concurrency allowance, and the right secret is refused after it', {
    skip: skipWithoutRedis, timeout: 180_000,
  }, async (t) => {
    compiled();
    const created = svc(database.url, ['client', 'create', '--name', 'App', '--type', 'confidential', '--redirect-uri', 'https://app.example/cb', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const { client_id: clientId, client_secret: secret } = created.json as { client_id: string; client_secret: string };
    const port = await freePort();
    const server: Running = run(process.execPath, [SERVICE_ENTRY], {
      DATABASE_URL: database.url, PORT: String(port), REDIS_URL: redisUrl!, TRUST_PROXY: '1', LOG_LEVEL: 'warn',
      CLIENT_AUTH_FAILURES_PER_ADDRESS: String(FAILURES_PER_ADDRESS),
    });
    const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    const redis = new Redis(redisUrl!);
    t.after(async () => {
      redis.disconnect();
      server.child.kill('SIGTERM');
      await server.exited;
    });
    await server.waitFor(/Listening on /, 60_000);

    const address = newAddress();
    await clearOfWindowEnd();
    const windowStart = Math.floor(Date.now() / 1000 / CLIENT_AUTH_WINDOW_SECONDS) * CLIENT_AUTH_WINDOW_SECONDS;
    const statuses = await burst(port, BURST, formRequest(port, '/api/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId, client_secret: 'not-the-secret' }, address));
    assert.deepEqual([...new Set(statuses)].sort(), [401, 429], 'only 401 and 429');
    // Every secret check that fails is counted in the failures of the client at the address (the
    // service's own counter in Redis); a failure past the limit answers 429, so the answers cannot tell it.
    const counters = await redis.keys(`svc:rl:client-auth:address-client:${addressKey(address)}:*:${windowStart}`);
    assert.equal(counters.length, 1, 'one client named');
    const failedChecks = Number(await redis.get(counters[0]!));
    t.diagnostic(`of ${BURST} wrong secrets at once, ${failedChecks} were checked; ${statuses.filter((s) => s === 401).length} answered 401`);
    // A loaded machine can keep the service from reading Redis's answers within its command
    // timeout; it then counts in its memory until Redis is back, and a check admitted by either
    // store can end counted in Redis: each store holds the bound on its own.
    const stores = server.output().includes('Redis unreachable') ? 2 : 1;
    if (stores === 2) t.diagnostic('Redis was taken for unreachable during the burst: the bound is doubled');
    // Each check holds its place in the count from before it starts, and a failure never gives it
    // back, so no interleaving lets more through.
    assert.ok(failedChecks <= stores * (FAILURES_PER_ADDRESS + CLIENT_AUTH_CHECKS_AT_ONCE), `${failedChecks} checks`);
    assert.equal((await burst(port, 1, formRequest(port, '/api/oauth/introspect', { token: 'anything', client_id: clientId, client_secret: secret }, address)))[0], 429,
      'the right secret after the burst');
  });
});
