/**
 * What the in-process library tests share (test/examples/*-library.test.ts): the service over a
 * real database (each suite runs on SQLite and PostgreSQL), the library's app listening on a free
 * port of `localhost` in this process (another origin than the service's 127.0.0.1), and a
 * browser of plain HTTP with one cookie jar per site, already signed in at the service, that
 * follows redirects between the two, approves the consent page and posts a `form_post` answer's
 * form to the app, as a browser does. No Chromium: what these libraries do happens on their
 * servers, not in a page.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { TestApp } from '../support/app.js';
import { CookieJar, browse } from '../support/browser-flow.js';
import { TestClock } from '../support/clock.js';
import type { TestDatabase } from '../support/databases.js';
import { type Browser, consentForm, formPostAnswer, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';
import { freePort } from '../support/instances.js';

/** The service with its clock on real time: the libraries check id_tokens against their own clock. */
export function startLibraryService(database: TestDatabase): Promise<TestApp> {
  return startOAuthApp(database, { clock: new TestClock(Date.now()) });
}

/** A free `http://localhost:PORT` for the app, known before the app is registered. */
export async function appAddress(): Promise<{ port: number; url: string }> {
  const port = await freePort();
  return { port, url: `http://localhost:${port}` };
}

/** Listens with `listener` (an Express app, say) on `port` of localhost; resolves to a closer. */
export async function listen(listener: (req: never, res: never) => void, port: number): Promise<() => Promise<void>> {
  const { createServer } = await import('node:http');
  const server: Server = createServer(listener as never);
  await new Promise<void>((resolve) => server.listen(port, 'localhost', resolve));
  return () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
}

export interface Visit {
  /** Where the browser ended: the address of the last answer. */
  url: URL;
  status: number;
  text: string;
  /** Every address the browser asked for, in order. */
  trail: string[];
}

/** A person's browser: signed in at the service (its own jar), and a jar for the app's site. */
export class TwoSiteBrowser {
  readonly app = new CookieJar();
  private constructor(readonly t: TestApp, readonly service: Browser) {}

  static async signedIn(t: TestApp): Promise<TwoSiteBrowser> {
    return new TwoSiteBrowser(t, (await signedInBrowser(t)).browser);
  }

  /**
   * Opens `start` and follows every redirect on either site, approving the consent page when the
   * service shows it and posting a `form_post` answer as its script would, until an answer that
   * is not a redirect, or an address `stop` accepts (not opened then).
   */
  async visit(start: string, options: { stop?: (url: URL) => boolean; init?: RequestInit } = {}): Promise<Visit> {
    const trail: string[] = [];
    let url = new URL(start);
    let init: RequestInit = options.init ?? {};
    for (let step = 0; step < 20; step++) {
      trail.push(url.href);
      const onService = url.origin === this.t.baseUrl;
      let response = onService ? await this.service.fetch(url.href, init) : await browse(this.app, url.href, init);
      init = {};
      let page = onService && url.pathname === '/oauth/authorize' && response.status === 200 ? await response.text() : undefined;
      if (page !== undefined && formPostAnswer(page) === undefined) {
        response = await this.service.postForm('/oauth/authorize', [...consentForm(page), ['decision', 'approve']]);
        page = response.status === 200 ? await response.text() : undefined;
      }
      const posted = page === undefined ? undefined : formPostAnswer(page);
      const location = response.headers.get('location');
      if (posted || (response.status >= 300 && response.status < 400 && location)) {
        if (!posted) await response.body?.cancel();
        url = new URL(posted ? posted.action : location!, url);
        if (posted) init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(posted.fields).toString() };
        if (options.stop?.(url)) return { url, status: 0, text: '', trail: [...trail, url.href] };
        continue;
      }
      if (page !== undefined) return { url, status: response.status, text: page, trail };
      return { url, status: response.status, text: await response.text(), trail };
    }
    assert.fail(`more than 20 redirects: ${trail.join(' -> ')}`);
  }

  /** Whether the service still knows this browser's session (a page that needs one answers 200). */
  async signedInAtService(): Promise<boolean> {
    const response = await this.service.fetch('/settings/applications');
    await response.body?.cancel();
    return response.status === 200;
  }
}

/** The grant's state in the service's database, for a client: what a refresh and a revocation did. */
export async function grantOf(t: TestApp, clientId: string): Promise<{ revokedReason: string | null; rotated: number }> {
  const db = t.deps.database.db;
  const grants = await db.selectFrom('grants').select(['id', 'revoked_reason']).where('client_id', '=', clientId).orderBy('id', 'desc').execute();
  assert.ok(grants[0], `a grant for ${clientId}`);
  const tokens = await db.selectFrom('refresh_tokens').select(['used_at']).where('grant_id', '=', grants[0].id).execute();
  return { revokedReason: grants[0].revoked_reason, rotated: tokens.filter((token) => token.used_at !== null).length };
}
