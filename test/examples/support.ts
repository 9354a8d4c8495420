/**
 * What every test of `examples/` shares (issue 17, "the proof"): the real service on SQLite, a
 * person and an app registered in it, the example started as its README says (`node
 * examples/NAME/server.mjs` with its settings in the environment, on its own port and on
 * `localhost` while the service is on 127.0.0.1: another origin and another site), and a real
 * Chromium whose console and page errors are collected. The assertions on what the service did
 * read its database: the example's pages only show what a person would see.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { writePost } from '../../src/core/community/posts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { TestClock } from '../support/clock.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { freePort } from '../support/instances.js';


/** `false`, or why the browser tests cannot run here. */

export const USERNAME = 'ada';
export const PASSWORD = 'correct horse battery staple';
/** The one published post of that person, which every example shows from /me/posts. */
export const POST_TITLE = 'Tomatoes in November';

/** The service on a fresh SQLite file, its clock on real time (libraries check id_tokens against it), and one person. */
export async function startService(): Promise<TestApp> {
  const service = await startTestApp(temporarySqliteDatabase(), { clock: new TestClock(Date.now()) });
  const person = await createAccount(service.deps.stores, service.clock, { username: USERNAME, password: PASSWORD, bio: 'Tries every library.' });
  await writePost(service.deps.stores, service.clock, { authorId: person.id, title: POST_TITLE, body: 'Read through `/me/posts`.', category: 'Examples', status: 'published' });
  return service;
}

export interface ExampleApp {
  clientId: string;
  clientSecret: string | undefined;
}

/** Registers the example's app as `npm run svc -- client create` would. */
export async function registerExample(service: TestApp, registration: {
  type: 'confidential' | 'public'; redirectUris: string[]; postLogoutRedirectUris?: string[]; backchannelLogoutUri?: string;
}): Promise<ExampleApp> {
  const { client, secret } = await registerClient(service.deps.stores, service.clock, { name: 'Example app', ...registration });
  return { clientId: client.clientId, clientSecret: secret };
}

export interface RunningExample {
  /** `http://localhost:PORT`, the origin the example serves. */
  url: string;
  port: number;
  /** Everything it printed, for the failure message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `examples/NAME/server.mjs` in a process of its own with `env` and PORT (a free one unless given), and
 * waits for the line it prints when it listens. Fails with its output if it exits first.
 */
export async function runExample(name: string, env: Record<string, string>, port?: number): Promise<RunningExample> {
  port ??= await freePort();
  const url = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, [`examples/${name}/server.mjs`], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const onData = () => { if (output.includes(`listening on ${url}`)) { child.stdout!.off('data', onData); resolve(); } };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`examples/${name} exited with ${code} before listening:\n${output}`)));
  });
  return {
    url,
    port,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface WatchedPage {
  page: Page;
  /** Console messages of type error, and uncaught page errors, from every origin the page visited. */
  errors: string[];
}

/** A page in a fresh context (no cookies, no storage) whose console errors are collected. */
export async function watchedPage(browser: Browser): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return { page, errors };
}

/** On the service's sign-in page (where the example sent the browser): signs in as the test's person. */
export async function signIn(page: Page, service: TestApp): Promise<void> {
  await page.waitForURL((url) => url.origin === service.baseUrl && url.pathname === '/login');
  await page.getByLabel('Username').fill(USERNAME);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * Signs in on the service's page, then approves on the consent page. Returns when the browser
 * has left the service.
 */
export async function signInAndApprove(page: Page, service: TestApp): Promise<void> {
  await signIn(page, service);
  await page.waitForURL((url) => url.origin === service.baseUrl && url.pathname === '/oauth/authorize');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL((url) => url.origin !== service.baseUrl);
}

/** The example's heading, once the page shows `expected` (examples render their state in the h1). */
export async function heading(page: Page, expected: string | RegExp): Promise<string> {
  const h1 = page.getByRole('heading', { level: 1 });
  await h1.filter({ hasText: expected }).waitFor();
  return h1.innerText();
}

/** The JSON an example shows in its `<pre id=NAME>` (what it read from the API). */
/** The titles of a /me/posts page an example shows. */
function postTitles(posts: Record<string, unknown>): string[] {
  return (posts.items as Array<{ title: string }>).map((post) => post.title);
}

export async function shownJson(page: Page, id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await page.locator(`pre#${id}`).innerText()) as Record<string, unknown>;
}

export interface GrantState {
  revokedReason: string | null;
  scope: string;
  refreshTokens: number;
  /** Refresh tokens that were rotated (used once). */
  rotated: number;
}

/** The grants the example's app holds, oldest first, as the service's database has them. */
export async function grantsOf(service: TestApp, clientId: string): Promise<GrantState[]> {
  const db = service.deps.database.db;
  const grants = await db.selectFrom('grants').select(['id', 'revoked_reason', 'scope']).where('client_id', '=', clientId).orderBy('id').execute();
  const states: GrantState[] = [];
  for (const grant of grants) {
    const tokens = await db.selectFrom('refresh_tokens').select(['used_at']).where('grant_id', '=', grant.id).execute();
    states.push({
      revokedReason: grant.revoked_reason, scope: grant.scope, refreshTokens: tokens.length,
      rotated: tokens.filter((token) => token.used_at !== null).length,
    });
  }
  return states;
}

/** Whether the person still has a live sign-in session at the service. */
export async function signedInAtService(service: TestApp): Promise<boolean> {
  const user = await service.deps.stores.users.findByUsername(USERNAME);
  return (await service.deps.stores.sessions.listForUser(user!.id, service.clock.now())).length > 0;
}

/** The assertion every example ends with: nothing went wrong in the browser on any origin. */
export function assertNoBrowserErrors(watched: WatchedPage, example: RunningExample): void {
  assert.deepEqual(watched.errors, [], `the browser reported errors; the example printed:\n${example.output()}`);
}

export interface WholeFlow {
  /** The scope the example asks for, as the service grants it. */
  grantedScope: string;
  /** Whether signing out also ends the session at the service (end_session_endpoint). */
  endsServiceSession: boolean;
  /** From the example's home page to the service's sign-in page; by default its "Sign in with Community" button. */
  startSignIn?: (page: Page) => Promise<void>;
  /** From a signed-in page to the example's "Signed out" page; by default its "Sign out" button. */
  signOut?: (page: Page) => Promise<void>;
}

/**
 * The journey every example must complete with its library's defaults (issue 17): sign in through
 * the service's real sign-in and consent pages, show /me, refresh (the refresh token rotates),
 * sign out (the refresh token is revoked, and with end_session the service's session ends), with
 * no browser error on any origin.
 */
export async function provesWholeFlow(browser: Browser, service: TestApp, example: RunningExample, app: ExampleApp, flow: WholeFlow): Promise<void> {
  const watched = await watchedPage(browser);
  const { page } = watched;
  const context = `\nthe example printed:\n${example.output()}\nthe browser reported: ${watched.errors.join('\n')}`;
  try {
    await page.goto(example.url);
    await (flow.startSignIn ?? ((p) => p.getByRole('button', { name: 'Sign in with Community' }).click()))(page);
    await signInAndApprove(page, service);
    assert.equal(await heading(page, /Signed in|wrong/), `Signed in as ${USERNAME}`, `${await page.content()}${context}`);
    assert.equal((await shownJson(page, 'me')).username, USERNAME, 'the example read /me with its access token');
    assert.deepEqual(postTitles(await shownJson(page, 'posts')), [POST_TITLE], 'the example read /me/posts with its access token');
    assert.deepEqual(await grantsOf(service, app.clientId), [{ revokedReason: null, scope: flow.grantedScope, refreshTokens: 1, rotated: 0 }]);

    await page.getByRole('button', { name: 'Refresh tokens' }).click();
    await page.getByRole('status').filter({ hasText: 'Tokens refreshed' }).waitFor();
    assert.equal((await shownJson(page, 'me')).username, USERNAME, 'the new access token reads /me');
    assert.deepEqual(postTitles(await shownJson(page, 'posts')), [POST_TITLE], 'the new access token reads /me/posts');
    assert.deepEqual(await grantsOf(service, app.clientId), [{ revokedReason: null, scope: flow.grantedScope, refreshTokens: 2, rotated: 1 }],
      'the refresh token was rotated once');

    await (flow.signOut ?? ((p) => p.getByRole('button', { name: 'Sign out' }).click()))(page);
    assert.equal(await heading(page, /Signed out|wrong/), 'Signed out', `${await page.content()}${context}`);
    assert.equal(new URL(page.url()).origin, example.url, 'back on the example');
    assert.equal((await grantsOf(service, app.clientId))[0]!.revokedReason, 'revoked_by_client', 'the example revoked its refresh token');
    assert.equal(await signedInAtService(service), !flow.endsServiceSession,
      flow.endsServiceSession ? 'the end_session_endpoint ended the session at the service' : 'signing out of the app leaves the service session');
    assertNoBrowserErrors(watched, example);
  } finally {
    await page.context().close();
  }
}

export interface Started {
  service: TestApp;
  app: ExampleApp;
  example: RunningExample;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Starts the service, registers the example's app at the address it will have (`url` is
 * `http://localhost:PORT`), runs the example with `ISSUER` and the settings `env` makes, and a
 * browser.
 */
export async function startExample(name: string, options: {
  registration: (url: string) => Parameters<typeof registerExample>[1];
  env: (app: ExampleApp) => Record<string, string>;
}): Promise<Started> {
  const service = await startService();
  let example: RunningExample | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await example?.stop();
    await service.close();
  };
  try {
    const port = await freePort();
    const app = await registerExample(service, options.registration(`http://localhost:${port}`));
    example = await runExample(name, { ISSUER: service.baseUrl, ...options.env(app) }, port);
    browser = await launchChromium();
    return { service, app, example, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `CLIENT_ID` and `CLIENT_SECRET` of a confidential app, as the Node examples read them. */
export const confidentialEnv = (app: ExampleApp): Record<string, string> => ({ CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret! });
