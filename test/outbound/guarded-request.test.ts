/**
 * The one guarded outbound request (src/outbound/guarded-request.ts): how it asks DNS. Its
 * resolver is pointed at a real name server on 127.0.0.1 that the test runs (a UDP socket that
 * answers A and AAAA queries from a table, or says nothing), so c-ares does what it does against
 * any name server; only the server's address is ours.
 */
import assert from 'node:assert/strict';
import { type Socket as UdpSocket, createSocket } from 'node:dgram';
import dnsPromises from 'node:dns/promises';
import { type Server, createServer } from 'node:http';
import { isIPv4 } from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, test } from 'node:test';
import { guardedRequest } from '../../src/outbound/guarded-request.js';

const options = { allowPrivateAddresses: false, allowSetting: 'TEST_ALLOW', timeoutMs: 300, maxBodyBytes: 1024, oversize: 'fail', userAgent: 'test' } as const;

/** A name server: the addresses of each name it knows (A and AAAA by their form), NXDOMAIN for the rest; silent for names in `silent`. */
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
  private answer(query: Buffer, port: number, address: string): void {
    const labels: string[] = [];
    let at = 12;
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('latin1'));
      at += 1 + query[at]!;
    }
    const type = query.readUInt16BE(at + 1);
    const question = query.subarray(12, at + 5);
    const name = labels.join('.').toLowerCase();
    this.asked.push(`${name} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    if (this.silent.has(name)) return;
    const known = this.records.get(name);
    const matching = (known ?? []).filter((a) => (type === 1 ? isIPv4(a) : type === 28 && !isIPv4(a)));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
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
const originalResolver = dnsPromises.Resolver;

before(async () => {
  names = await NameServer.start();
  const servers = [names.address];
  // Every resolver the guarded request makes asks our name server instead of /etc/resolv.conf's.
  dnsPromises.Resolver = class extends originalResolver {
    constructor(resolverOptions?: ConstructorParameters<typeof originalResolver>[0]) {
      super(resolverOptions);
      this.setServers(servers);
    }
  };
  syncBuiltinESMExports();
  site = createServer((_request, response) => response.end('hello'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as { port: number }).port;
});

after(() => {
  dnsPromises.Resolver = originalResolver;
  syncBuiltinESMExports();
  names.close();
  site.close();
});

test('a name is asked of DNS for its A and AAAA records, and the connection goes to an address it gave', async () => {
  names.records.set('documents.test', ['127.0.0.1']);
  const answer = await guardedRequest(`http://documents.test:${sitePort}/`, { method: 'GET' }, { ...options, allowPrivateAddresses: true });
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
