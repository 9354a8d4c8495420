/**
 * The one request to an address someone else registered (docs/oidc.md, "Logout: where logout
 * tokens may go"): non-public addresses refused unless allowed, redirects not followed, answers
 * read no further than 16 KiB, slow receivers cut off.
 */
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { isPublicAddress } from '../../src/outbound/name-resolver.js';
import { HttpLogoutSender } from '../../src/outbound/logout-sender.js';
import { LogoutReceiver } from '../support/logout-receiver.js';

let receiver: LogoutReceiver;
before(async () => { receiver = await LogoutReceiver.start(); });
after(() => receiver.close());

const open = new HttpLogoutSender({ allowPrivateAddresses: true, timeoutMs: 5000 });
const strict = new HttpLogoutSender({ allowPrivateAddresses: false, timeoutMs: 5000 });

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/bc` };
}

test('private, loopback, link-local and other non-public addresses are told from public ones, mapped, translated and tunnelled IPv6 included', () => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1',
    // IPv6 that relays and translators turn back into IPv4 (an attacker's way around the list), and site-local.
    '::127.0.0.1', '::7f00:1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '::ffff:0:7f00:1', 'fec0::1']) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(isPublicAddress(address), true, address);
  }
  assert.equal(isPublicAddress('not-an-address'), false);
});

test('a non-public address is refused before any connection unless BACKCHANNEL_ALLOW_PRIVATE allows it, by address and by name', async () => {
  const before = receiver.received.length;
  for (const uri of [receiver.url('/refused'), `http://localhost:${receiver.port}/refused`, `http://[::ffff:127.0.0.1]:${receiver.port}/refused`]) {
    const outcome = await strict.send(uri, 'a.b.c');
    assert.equal(outcome.delivered, false, uri);
    assert.match((outcome as { error: string }).error, /refused: .*not a public address/, uri);
  }
  assert.equal(receiver.received.length, before, 'nothing reached the receiver');
  assert.deepEqual(await open.send(receiver.url('/allowed'), 'a.b.c'), { delivered: true });
  assert.deepEqual(receiver.tokens('/allowed'), ['a.b.c']);
});

test('only 200 and 204 count as delivered; a redirect is a failed attempt and is not followed', async () => {
  receiver.answer('/no-content', { status: 204 });
  assert.deepEqual(await open.send(receiver.url('/no-content'), 't'), { delivered: true });
  for (const status of [201, 202, 400, 404, 500, 503]) {
    receiver.answer(`/status-${status}`, { status });
    assert.deepEqual(await open.send(receiver.url(`/status-${status}`), 't'), { delivered: false, error: `answered HTTP ${status}` });
  }
  receiver.answer('/moved', { status: 307, location: receiver.url('/elsewhere') });
  const moved = await open.send(receiver.url('/moved'), 't');
  assert.deepEqual(moved, { delivered: false, error: 'answered HTTP 307; redirects are not followed' });
  assert.deepEqual(receiver.tokens('/elsewhere'), []);
});

test('a receiver that does not answer within the timeout is a failed attempt', async () => {
  const { server, url } = await serve(() => { /* never answers */ });
  try {
    const outcome = await new HttpLogoutSender({ allowPrivateAddresses: true, timeoutMs: 300 }).send(url, 't');
    assert.deepEqual(outcome, { delivered: false, error: 'no answer within 0.3 s' });
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('an answer is read no further than 16 KiB', async () => {
  let wrote = 0;
  let finished = false;
  const { server, url } = await serve((_request, response) => {
    response.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 120);
    const more = () => {
      while (wrote < 64 * 1024 * 1024) {
        wrote += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', more);
      }
      response.end(() => { finished = true; });
    };
    response.on('error', () => {});
    more();
  });
  try {
    assert.deepEqual(await open.send(url, 't'), { delivered: true });
    assert.equal(finished, false, 'the 64 MiB answer was not read to its end');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
