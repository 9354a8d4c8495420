/**
 * PostgreSQL going away while the service runs: requests in the gap get a prompt 503 (never a
 * crash, never a hang), and service resumes by itself when the database is back. The outage is
 * real: the service reaches PostgreSQL through a TCP relay that the test cuts and restores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { UNAVAILABLE_LOG_INTERVAL_MS } from '../../src/http/plugins/errors.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { TcpRelay } from '../support/relay.js';

forEachDatabase('database outage', (database) => {
  if (database.name !== 'postgres') {
    // An embedded database cannot become unreachable; nothing to test there.
    return;
  }
  describe('with PostgreSQL behind a relay', () => {
    let relay: TcpRelay;
    let t: TestApp;
    const logLines: string[] = [];
    before(async () => {
      const url = new URL(database.url);
      relay = new TcpRelay({ host: url.hostname, port: Number(url.port || 5432) });
      await relay.open();
      url.host = `127.0.0.1:${relay.port}`;
      t = await startTestApp({ ...database, target: { kind: 'postgres', url: url.toString() }, url: url.toString() }, { logLines });
    });
    after(async () => {
      await t.close();
      await relay.cut();
    });

    const get = (path: string) => fetch(`${t.baseUrl}${path}`, { signal: AbortSignal.timeout(20_000) });

    test('requests during an outage get 503 with a body, and service resumes by itself', async () => {
      assert.equal((await get('/')).status, 200);

      await relay.cut();
      const page = await get('/');
      assert.equal(page.status, 503);
      assert.match(await page.text(), /briefly unavailable/);
      const ready = await get('/readyz');
      assert.equal(ready.status, 503);
      assert.equal((await ready.json()).checks.database, 'unreachable');
      assert.equal((await get('/healthz')).status, 200, 'the process itself stays alive');

      await relay.open();
      let status = 0;
      for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
        status = (await get('/')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(status, 200);
      assert.equal((await get('/readyz')).status, 200);
    });

    test('requests that meet PostgreSQL going away never crash the process: each gets 503', async () => {
      assert.equal((await get('/')).status, 200);
      await relay.cut();
      for (let i = 0; i < 5; i++) assert.equal((await get('/')).status, 503, `request ${i + 1}`);
      // pg's 'error' on a lent-out client, unheard, would have ended the process by now.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal((await get('/healthz')).status, 200);
      await relay.open();
      for (let attempt = 0; attempt < 20 && (await get('/')).status !== 200; attempt++) await new Promise((r) => setTimeout(r, 250));
    });

    test('an outage is logged once with its error, not a line and a stack per refused request', async () => {
      assert.equal((await get('/')).status, 200);
      t.clock.advance(UNAVAILABLE_LOG_INTERVAL_MS);
      const before = logLines.length;
      await relay.cut();
      for (let i = 0; i < 5; i++) assert.equal((await get('/')).status, 503);
      const unavailable = () => logLines.slice(before).filter((line) => line.includes('"backend unavailable"'));
      assert.equal(unavailable().length, 1, unavailable().join('\n'));
      assert.match(unavailable()[0]!, /"err":/);
      t.clock.advance(UNAVAILABLE_LOG_INTERVAL_MS);
      assert.equal((await get('/')).status, 503);
      assert.equal(unavailable().length, 2);
      assert.match(unavailable()[1]!, /"leftOut":4/, 'the next line says how many it left out');
      await relay.open();
      for (let attempt = 0; attempt < 20 && (await get('/')).status !== 200; attempt++) await new Promise((r) => setTimeout(r, 250));
    });
  });
});
