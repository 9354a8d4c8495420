/**
 * The test app (test/support/app.ts) chooses a free port before it listens, since BASE_URL names
 * it: another process (another test file) may take that port meanwhile, and the app then chooses
 * again rather than failing the test it was started for.
 */
import assert from 'node:assert/strict';
import { type AddressInfo, Server, createServer } from 'node:net';
import { test } from 'node:test';
import { forEachDatabase } from './databases.js';
import { type TestApp, startTestApp } from './app.js';

forEachDatabase('the test app', (database) => {
  test('listens on another port when another process takes the one it chose before it listens', async () => {
    const squatter = createServer();
    let taken: number | undefined;
    const close = Server.prototype.close;
    // The first server closed is the probe that chose the port: once it has let the port go,
    // another takes it, before the app listens.
    Server.prototype.close = function (this: Server, callback?: (error?: Error) => void) {
      Server.prototype.close = close;
      taken = (this.address() as AddressInfo).port;
      return close.call(this, (error?: Error) => {
        squatter.listen(taken, '127.0.0.1', () => callback?.(error));
      });
    };
    let t: TestApp | undefined;
    try {
      t = await startTestApp(database);
      assert.ok(squatter.listening && taken !== undefined, 'the port chosen first was taken');
      assert.notEqual(new URL(t.baseUrl).port, String(taken));
      const response = await fetch(`${t.baseUrl}/.well-known/openid-configuration`);
      assert.equal(response.status, 200);
      assert.equal((await response.json() as { issuer: string }).issuer, t.baseUrl, 'BASE_URL names the port it listens on');
    } finally {
      Server.prototype.close = close;
      await t?.close();
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
