/**
 * The one guarded outbound request (src/outbound/guarded-request.ts): how it asks DNS. Names are
 * asked of a real name server on 127.0.0.1 that the test runs (a UDP socket that answers A and
 * AAAA queries from a table, or says nothing), set with `dns.setServers` before the resolver's
 * thread starts, so c-ares does what it does against any name server; only the server is ours.
 */
import assert from 'node:assert/strict';
import { type Socket as UdpSocket, createSocket } from 'node:dgram';
import dns from 'node:dns';
import { type Server, createServer } from 'node:http';
import { isIPv4 } from 'node:net';
import { after, before, test } from 'node:test';
import { guardedRequest } from '../../src/outbound/guarded-request.js';
import { ADDRESSES_PER_FAMILY, NameResolver } from '../../src/outbound/name-resolver.js';

const options = { allowPrivateAddresses: false, allowSetting: 'TEST_ALLOW', timeoutMs: 300, maxBodyBytes: 1024, oversize: 'fail', userAgent: 'test', names: new NameResolver() } as const;

/**
 * A name server: the addresses of each name it knows (A and AAAA by their form), NXDOMAIN for the
 * rest; silent for the names in `silent`, or for one type of query (`name AAAA`).
 */
class NameServer {
  readonly records = new Map<string, string[]>();
  readonly silent = new Set<string>();
  readonly asked: string[] = [];
  private constructor(private readonly socket: UdpSocket, readonly address: string) {}

  static async start(): Promise<NameServer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const server = new NameServer(socket, `127.0.0.1:${socket.address().port}`);
    socket.on('message', (query, peer) => server.answer(query, peer.port, peer.address));
    return server;
  }

  close(): void {
    this.socket.close();
  }

  /** RFC 1035 4.1: the question is copied back, with one answer record per address of the asked type. */
  private answer(packet: Buffer, port: number, address: string): void {
    const labels: string[] = [];
    let at = 12;
    while (packet[at]! > 0) {
      labels.push(packet.subarray(at + 1, at + 1 + packet[at]!).toString('latin1'));
      at += 1 + packet[at]!;
    }
    const type = packet.readUInt16BE(at + 1);
    const question = packet.subarray(12, at + 5);
    const name = labels.join('.').toLowerCase();
    const query = `${name} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`;
    this.asked.push(query);
    if (this.silent.has(name) || this.silent.has(query)) return;
    const known = this.records.get(name);
    const matching = (known ?? []).filter((a) => (type === 1 ? isIPv4(a) : type === 28 && !isIPv4(a)));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(packet.readUInt16BE(0), 0);
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN for an unknown name
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(matching.length, 6);
    const records = matching.map((a) => {
      const data = isIPv4(a) ? Buffer.from(a.split('.').map(Number)) : ipv6Bytes(a);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    this.socket.send(Buffer.concat([header, question, ...records]), port, address);
  }
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const start = groups(head!);
  const end = groups(tail);
  const all = [...start, ...Array(8 - start.length - end.length).fill(0), ...end];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

let names: NameServer;
let site: Server;
let sitePort: number;
const originalServers = dns.getServers();

before(async () => {
  names = await NameServer.start();
  // The resolver's thread starts at the first lookup, with the process's name servers then.
  dns.setServers([names.address]);
  site = createServer((_request, response) => response.end('hello'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as { port: number }).port;
});

after(() => {
  dns.setServers(originalServers);
  names.close();
  site.close();
});

test('a name is asked of DNS for its A and AAAA records, and the connection goes to an address it gave', async () => {
  names.records.set('documents.test', ['127.0.0.1']);
  // The first lookup starts the resolver's thread, which a loaded machine took past 0.3 s to do.
  const answer = await guardedRequest(`http://documents.test:${sitePort}/`, { method: 'GET' }, { ...options, allowPrivateAddresses: true, timeoutMs: 3000 });
  assert.equal(answer.ok && answer.body.toString(), 'hello');
  assert.ok(names.asked.includes('documents.test A') && names.asked.includes('documents.test AAAA'), names.asked.join(', '));
});

test('every address a name has is checked: one non-public address among public ones refuses the name', async () => {
  names.records.set('mixed.test', ['93.184.215.14', '::1']);
  const answer = await guardedRequest('https://mixed.test/doc.json', { method: 'GET' }, options);
  assert.deepEqual(answer, { ok: false, answered: false, error: 'refused: mixed.test resolves to ::1, which is not a public address (TEST_ALLOW is off)' });
});

test('a name DNS does not know fails at once with ENOTFOUND', async () => {
  const answer = await guardedRequest('https://unknown.test/doc.json', { method: 'GET' }, options);
  assert.equal(answer.ok, false);
  assert.match(!answer.ok ? answer.error : '', /^ENOTFOUND/);
});

test('a name server that never answers holds a request only to its limit, and is asked nothing more once it ends: the queries are cancelled', async () => {
  const silentNames = Array.from({ length: 8 }, (_, i) => `silent-${i}.test`);
  for (const name of silentNames) names.silent.add(name);
  const answers = await Promise.all(silentNames.map((name) => guardedRequest(`https://${name}/doc.json`, { method: 'GET' }, options)));
  for (const answer of answers) assert.deepEqual(answer, { ok: false, answered: false, error: 'no answer within 0.3 s' });
  const askedAtEnd = names.asked.filter((q) => q.startsWith('silent-')).length;
  assert.equal(askedAtEnd, 2 * silentNames.length, 'each name asked once for A and once for AAAA');
  // A query still open would be asked again after the first try's 2 s.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal(names.asked.filter((q) => q.startsWith('silent-')).length, askedAtEnd, 'no query was tried again after its request ended');
});

test('localhost and the names under it are the loopback addresses, asked of no name server (RFC 6761 6.3), and refused as such unless private addresses are allowed', async () => {
  const askedBefore = names.asked.length;
  for (const host of ['localhost', 'app.localhost', 'LOCALHOST.']) {
    const answer = await guardedRequest(`http://${host}:${sitePort}/`, { method: 'GET' }, { ...options, allowPrivateAddresses: true });
    assert.equal(answer.ok && answer.body.toString(), 'hello', host);
  }
  const refused = await guardedRequest(`https://localhost:${sitePort}/`, { method: 'GET' }, options);
  assert.deepEqual(refused, { ok: false, answered: false, error: 'refused: localhost resolves to 127.0.0.1, which is not a public address (TEST_ALLOW is off)' });
  assert.equal(names.asked.length, askedBefore, 'no name server was asked');
});

test('every address of a name with many is checked, and the connection is offered only the first four of each family', async () => {
  const many = Array.from({ length: 40 }, (_, i) => `93.184.216.${i + 1}`);
  names.records.set('many-public.test', [...many.slice(0, 39), '10.0.0.1']);
  const refused = await guardedRequest('https://many-public.test/doc.json', { method: 'GET' }, options);
  assert.deepEqual(refused, { ok: false, answered: false, error: 'refused: many-public.test resolves to 10.0.0.1, which is not a public address (TEST_ALLOW is off)' });
  // Forty loopback addresses, none listening on the port: each address tried is one refusal in the error.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
  names.records.set('many-loopback.test', Array.from({ length: 40 }, (_, i) => `127.0.1.${i + 1}`));
  const answer = await guardedRequest(`http://many-loopback.test:${closedPort}/`, { method: 'GET' }, { ...options, allowPrivateAddresses: true, timeoutMs: 3000 });
  assert.equal(answer.ok, false);
  const tried = new Set((!answer.ok ? answer.error : '').match(/127\.0\.1\.\d+/g));
  assert.ok(tried.size >= 1 && tried.size <= ADDRESSES_PER_FAMILY, `tried ${[...tried].join(', ')}`);
  assert.equal(ADDRESSES_PER_FAMILY, 4);
});

test('a name server that answers A but never AAAA costs the request a moment, not its limit: the family that answered is used, and the other query ends', async () => {
  names.records.set('no-aaaa.test', ['127.0.0.1']);
  names.silent.add('no-aaaa.test AAAA');
  const answer = await guardedRequest(`http://no-aaaa.test:${sitePort}/`, { method: 'GET' }, { ...options, allowPrivateAddresses: true, timeoutMs: 3000 });
  assert.equal(answer.ok && answer.body.toString(), 'hello', 'answered before the first try of AAAA (2 s) would have ended');
  // The query cut short is cancelled with the lookup: it is not tried again after its first 2 s.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.deepEqual(names.asked.filter((q) => q === 'no-aaaa.test AAAA'), ['no-aaaa.test AAAA']);
});
