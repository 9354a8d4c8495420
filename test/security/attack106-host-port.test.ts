/**
 * attack106 F4: a Host whose port is past 65535 (`Host: 127.0.0.1:99999`, or four hundred digits)
 * was served, though no TCP port is past it (RFC 9293 3.1) and the same authority in a target in
 * absolute form (`GET http://127.0.0.1:99999/`) was refused as no URL. RFC 9112 3.2: a Host that is
 * no host and port is 400 in the service's shape, the connection closed; ports up to 65535, with
 * leading zeros or none at all, are served as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { answersIn, exchange } from '../support/raw-socket.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

async function only(bytes: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { text, closed } = await exchange(t.baseUrl, bytes, { quietMs: 5000 });
  assert.ok(closed, `the connection is closed after ${JSON.stringify(bytes.slice(0, 60))}`);
  const answers = answersIn(text);
  assert.equal(answers.length, 1, text.slice(0, 200));
  return answers[0]!;
}

test('a Host whose port no TCP port can be is 400 in the service\'s shape; ports up to 65535 are served', async () => {
  for (const value of ['127.0.0.1:99999', '127.0.0.1:65536', `127.0.0.1:${'9'.repeat(400)}`, '[::1]:70000', 'id.example.com:100000']) {
    const api = await only(`GET /api/open/v1/me HTTP/1.1\r\nHost: ${value}\r\n\r\n`);
    assert.equal(api.status, 400, value.slice(0, 40));
    assert.equal(api.headers.get('connection'), 'close');
    assert.equal(JSON.parse(api.body).error, 'invalid_request');
    const page = await only(`GET /login HTTP/1.1\r\nHost: ${value}\r\nAccept-Language: zh-CN\r\n\r\n`);
    assert.equal(page.status, 400, value.slice(0, 40));
    assert.equal(page.headers.get('content-language'), 'zh-CN');
  }
  for (const value of ['127.0.0.1:65535', '127.0.0.1:0', '127.0.0.1:000080', '[::1]:3000', 'localhost:']) {
    assert.equal((await only(`GET /healthz HTTP/1.1\r\nHost: ${value}\r\nConnection: close\r\n\r\n`)).status, 200, value);
  }
});
