/**
 * TRUST_PROXY (INTERFACE section 8): the client's address is taken from X-Forwarded-For only as
 * far back as the proxies in front are trusted, so a client cannot pick its own address and slip
 * past a per-address limit by sending the header.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

/** The address the service saw for one request sending `forwardedFor`, as its request log has it. */
async function addressSeen(trustProxy: string, forwardedFor: string): Promise<string> {
  const logLines: string[] = [];
  const t = await startTestApp(temporarySqliteDatabase(), { env: { TRUST_PROXY: trustProxy }, logLines });
  try {
    await fetch(`${t.baseUrl}/healthz?probe=1`, { headers: { 'x-forwarded-for': forwardedFor } });
    const line = logLines.map((l) => JSON.parse(l) as { req?: { url: string; ip: string } }).find((l) => l.req?.url === '/healthz?probe=1');
    assert.ok(line?.req, 'the request was logged');
    return line.req.ip;
  } finally {
    await t.close();
  }
}

test('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
  assert.equal(await addressSeen('0', '203.0.113.9'), '127.0.0.1');
});

test('TRUST_PROXY=1: the last X-Forwarded-For entry is the client, whatever the client wrote before it', async () => {
  assert.equal(await addressSeen('1', '203.0.113.9, 198.51.100.7'), '198.51.100.7');
});

test('TRUST_PROXY=2: two proxies in front, the entry two hops back is the client', async () => {
  assert.equal(await addressSeen('2', '203.0.113.9, 198.51.100.7, 192.0.2.1'), '198.51.100.7');
});

test('TRUST_PROXY as a list: only the listed proxies are walked through', async () => {
  assert.equal(await addressSeen('127.0.0.1,10.0.0.0/8', '203.0.113.9, 198.51.100.7, 10.1.2.3'), '198.51.100.7');
  assert.equal(await addressSeen('10.0.0.0/8', '203.0.113.9'), '127.0.0.1', 'a peer not in the list is the client itself');
});

test('an X-Forwarded-For entry with a port is the address without it', async () => {
  assert.equal(await addressSeen('1', '198.51.100.7:51234'), '198.51.100.7');
  assert.equal(await addressSeen('1', '[2001:db8::7]:443'), '2001:db8::7');
});

test('an IPv6 zone in an X-Forwarded-For entry is dropped', async () => {
  assert.equal(await addressSeen('1', 'fe80::1%call-555-0100-to-unlock'), 'fe80::1');
  assert.equal(await addressSeen('1', '[fe80::1%eth0]:443'), 'fe80::1');
});

test('an X-Forwarded-For entry that is not an address is never taken as one: the nearest address a trusted proxy wrote is', async () => {
  // TRUST_PROXY=2 with one proxy in front: the client's own entry is reached, and 192.0.2.1 is the
  // address the proxy saw.
  assert.equal(await addressSeen('2', 'call +1 555 0100 to unlock, 192.0.2.1'), '192.0.2.1');
  assert.equal(await addressSeen('3', 'call +1 555 0100 to unlock, [fe80::1]:99999, 192.0.2.1'), '192.0.2.1');
  assert.equal(await addressSeen('1', '198.51.100.7:99999999'), '127.0.0.1', 'the socket\'s peer, when no entry before it was believed');
});

test('an X-Forwarded-For entry whose port is not a port (above 65535) is not an address with a port', async () => {
  assert.equal(await addressSeen('1', '198.51.100.7:65535'), '198.51.100.7');
  assert.equal(await addressSeen('1', '198.51.100.7:65536'), '127.0.0.1');
  assert.equal(await addressSeen('1', '[2001:db8::7]:99999'), '127.0.0.1');
});

/** The warnings the service logged while it answered `requests` (headers each) under `trustProxy`. */
async function warningsFor(trustProxy: string, requests: Array<Record<string, string>>): Promise<Array<Record<string, unknown>>> {
  const logLines: string[] = [];
  const t = await startTestApp(temporarySqliteDatabase(), { env: { TRUST_PROXY: trustProxy }, logLines });
  try {
    for (const headers of requests) await (await fetch(`${t.baseUrl}/healthz`, { headers })).arrayBuffer();
    return logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
  } finally {
    await t.close();
  }
}

test('without TRUST_PROXY, the first request that carries X-Forwarded-For or Forwarded is warned of once, naming TRUST_PROXY and none of the header\'s values', async () => {
  const forwarded: Array<Record<string, string>> = [{ forwarded: 'for=203.0.113.9' }, { 'x-forwarded-for': '203.0.113.9' }, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' }];
  const warnings = await warningsFor('0', [{}, ...forwarded]);
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  const [warning] = warnings;
  assert.equal(warning!.header, 'Forwarded');
  assert.equal(warning!.peer, '127.0.0.1');
  assert.match(String(warning!.msg), /TRUST_PROXY/);
  assert.doesNotMatch(JSON.stringify(warning), /203\.0\.113\.9|198\.51\.100\.7/);
  assert.deepEqual(await warningsFor('0', [{}, {}]), [], 'no header, no warning');
  assert.deepEqual(await warningsFor('1', forwarded), [], 'a trusted proxy\'s header is expected');
});

test('TRUST_PROXY as a list that does not name the proxy that connects: the first request it forwards is warned of once, naming the peer; from a listed proxy, never', async () => {
  // A proxy whose address changed (a container's, renumbered) is every client's one address, as
  // with TRUST_PROXY unset.
  const forwarded: Array<Record<string, string>> = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=198.51.100.7' }];
  const warnings = await warningsFor('10.0.0.0/8,192.0.2.1', [{}, ...forwarded]);
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.equal(warnings[0]!.header, 'X-Forwarded-For');
  assert.equal(warnings[0]!.peer, '127.0.0.1');
  assert.match(String(warnings[0]!.msg), /TRUST_PROXY/);
  assert.doesNotMatch(JSON.stringify(warnings[0]), /203\.0\.113\.9|198\.51\.100\.7/);
  assert.deepEqual(await warningsFor('10.0.0.0/8,127.0.0.0/8', forwarded), [], 'the listed proxy\'s header is expected');
});
