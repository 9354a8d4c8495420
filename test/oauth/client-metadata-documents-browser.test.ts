/**
 * Another site's page and the document fetches, in a real headless Chromium: a page on another
 * site can make its visitors' browsers ask for our pages, and each ask for an app this instance
 * does not keep would fetch the app's document on the visitor's share of fetches (docs/oauth.md,
 * "Fetches at once"; attack56). The pages that fetch answer only the browser going to them.
 */
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { DocumentServer } from '../support/document-server.js';
import { pkcePair, startOAuthApp } from './helpers.js';

forEachDatabase('document fetches asked for by another site\'s page in Chromium', (database) => {
  let t: TestApp;
  let browser: Browser;
  let documents: DocumentServer;
  /** Serves whatever page a test sets, from another site than the server's 127.0.0.1. */
  let hostile: Server;
  let hostileOrigin: string;
  let hostilePage = '';

  before(async () => {
    t = await startOAuthApp(database);
    documents = await DocumentServer.start();
    hostile = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostilePage));
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    hostileOrigin = `http://localhost:${(hostile.address() as { port: number }).port}`;
    if (!skipWithoutChromium) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => hostile?.close(resolve));
    documents?.close();
    await t?.close();
  });

  /** The path of an authorization request for a new document app, and the document's path. */
  function newApp(name: string): { authorize: string; document: string } {
    const document = `/${name}-${process.hrtime.bigint()}.json`;
    const query = new URLSearchParams({
      response_type: 'code', client_id: documents.document(document), redirect_uri: 'http://127.0.0.1/callback', scope: 'profile:read',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    return { authorize: `/oauth/authorize?${query}`, document };
  }

  test('images, frames, scripts and styles another site points at /oauth/authorize, /login or /signup fetch no document; a link the member follows does', { skip: skipWithoutChromium }, async () => {
    const embedded = {
      image: newApp('image'), frame: newApp('frame'), script: newApp('script'), style: newApp('style'),
      signIn: newApp('sign-in-image'), signUp: newApp('sign-up-frame'),
    };
    const followed = newApp('followed');
    const at = (path: string) => `${t.baseUrl}${path}`;
    const returningTo = (page: string, path: string) => at(`${page}?${new URLSearchParams({ return_to: path })}`);
    hostilePage = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
      <link rel="stylesheet" href="${at(embedded.style.authorize)}"><script src="${at(embedded.script.authorize)}"></script></head><body>
      <img src="${at(embedded.image.authorize)}"><iframe src="${at(embedded.frame.authorize)}"></iframe>
      <img src="${returningTo('/login', embedded.signIn.authorize)}"><iframe src="${returningTo('/signup', embedded.signUp.authorize)}"></iframe>
      <a href="${at(followed.authorize)}">Sign in with the community</a></body></html>`;
    // Scripts on, as another site's page has them: a script element is fetched only then.
    const context = await browser.newContext();
    const page = await context.newPage();
    const asked: string[] = [];
    page.on('request', (request) => { if (request.url().startsWith(t.baseUrl)) asked.push(new URL(request.url()).pathname); });

    await page.goto(hostileOrigin, { waitUntil: 'load' });
    assert.deepEqual(asked.sort(), ['/login', '/oauth/authorize', '/oauth/authorize', '/oauth/authorize', '/oauth/authorize', '/signup'], 'the browser asked for each');
    for (const [kind, app] of Object.entries(embedded)) assert.equal(documents.count(app.document), 0, `${kind}: nothing fetched`);

    await page.getByRole('link').click();
    await page.waitForURL(/\/login\?return_to=/);
    assert.equal(documents.count(followed.document), 1, 'fetched once');
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), new RegExp(`127\\.0\\.0\\.1:${new URL(documents.origin).port}`), 'the sign-in page names the app by its host');
    await context.close();
  });
});
