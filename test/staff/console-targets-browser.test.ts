/**
 * The staff console's pages measured in headless Chromium by the rules the member's pages are
 * (test/support/page-measures.ts): every pointer target at least 24 × 24 CSS px (WCAG 2.2 SC
 * 2.5.8), no page wider than its window, and every control's name starting with the words it shows
 * (SC 2.5.3), at a phone's width and a desktop's, in every language. One walk of every page (the
 * overview, a search, a member, an app, the keys, the staff log, a confirmation, a refusal and an
 * error) for each language and width; each test reports every problem the walk found. With
 * CONSOLE_SHOTS=1 each page is saved under /tmp/console-shots/ to be looked at.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { LOCALES } from '../../src/core/locales.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { MINIMUM_TARGET, namesNotStartingWithLabel, pageWidth, smallTargets } from '../support/page-measures.js';
import { appReview, person } from './support.js';

const WIDTHS = [{ width: 390, height: 844 }, { width: 1280, height: 900 }] as const;
const REASON = 'checked with the owner by mail';
/** With CONSOLE_SHOTS=1 every page walked is saved there, to look at. */
const SHOTS = process.env.CONSOLE_SHOTS === '1' ? '/tmp/console-shots' : undefined;

describe('the staff console\'s pages in Chromium, at a phone\'s and a desktop\'s width, in every language', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  /** What the one walk found, by rule. */
  const small: string[] = [];
  const wide: string[] = [];
  const misnamed: string[] = [];

  before(async () => {
    t = await startTestApp(temporarySqliteDatabase());
    browser = await launchChromium();
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    const { stores } = t.deps;
    const admin = await person(t, 'admin', { twoStep: true });
    // A member whose page has a row in every table, and apps of theirs with a staff-log entry each.
    const member = await createAccount(stores, t.clock, { username: 'kehu', nickname: '客户小王', password: 'a member pass phrase' });
    const { client: app } = await registerClient(stores, t.clock, { name: 'Pаypal 助手', type: 'confidential', redirectUris: ['https://pay.example/cb'], homepageUrl: 'https://pay.example', ownerId: member.id });
    const now = t.clock.now();
    await stores.consents.save(member.id, app.clientId, 'profile:read', now);
    await stores.grants.create({ userId: member.id, clientId: app.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: member.id, name: '夜间备份', scopes: ['profile:read'], expiresInDays: 30 });
    assert.equal((await admin.visitor.post(`/admin/members/${member.id}/sessions/revoke`, { reason: REASON, confirm: 'yes' })).status, 303);
    assert.equal((await (await appReview(admin, app.clientId)).verify(REASON)).status, 303);
    await stores.sessions.create({ idHash: hashSecret('a browser of the member'), userId: member.id, authTime: now, expiresAt: now + 3_600_000, amr: ['pwd'], userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/140.0.0.0', address: '192.0.2.1' }, now);

    const pages = ['/admin', '/admin/members?q=kehu', `/admin/members/${member.id}`, '/admin/apps', `/admin/apps/${app.clientId}`, '/admin/keys', '/admin/keys/rotate', '/admin/staff-log'];
    /** Pages a form answers: a change's confirmation, a refused change (on oneself), and an error (a verify form made by hand). */
    const answers: Array<[string, Record<string, string>, number]> = [
      [`/admin/members/${member.id}/status`, { status: 'suspended', reason: REASON }, 200],
      [`/admin/members/${admin.user.id}/status`, { status: 'suspended', reason: REASON }, 403],
      [`/admin/apps/${app.clientId}/verified`, { verified: 'yes', reason: REASON, confirm: 'yes' }, 400],
    ];
    const look = async (page: Page, where: string) => {
      for (const line of await smallTargets(page)) small.push(`${where}: ${line}`);
      const width = await pageWidth(page);
      if (width > page.viewportSize()!.width) wide.push(`${where}: ${width} px`);
      for (const line of await namesNotStartingWithLabel(page)) misnamed.push(`${where}: ${line}`);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/${where.replace(/[^\w-]+/g, '_')}.png`, fullPage: true });
    };
    for (const locale of LOCALES) {
      for (const viewport of WIDTHS) {
        const context = await browser.newContext({ locale, viewport, timezoneId: 'Asia/Shanghai' });
        // The admin's sign-in, two-step included, as their Visitor holds it.
        await context.addCookies([...admin.visitor.cookies, ['lang', locale]].map(([name, value]) => ({ name: name!, value: value!, url: t.baseUrl })));
        const page = await context.newPage();
        for (const path of pages) {
          assert.equal((await page.goto(`${t.baseUrl}${path}`))?.status(), 200, path);
          await look(page, `${locale} ${viewport.width} ${path}`);
        }
        for (const [path, fields, status] of answers) {
          const csrf = await page.locator('input[name=_csrf]').first().inputValue();
          const [response] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${t.baseUrl}${path}` && r.request().method() === 'POST'),
            // Each answer's address differs from the page before it's.
            page.waitForURL(`${t.baseUrl}${path}`),
            page.evaluate(({ path, fields }) => {
              const form = document.createElement('form');
              form.method = 'post';
              form.action = path;
              for (const [name, value] of Object.entries(fields)) form.append(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
              document.body.append(form);
              form.submit();
            }, { path, fields: { ...fields, _csrf: csrf } }),
          ]);
          assert.equal(response.status(), status, `POST ${path}`);
          await look(page, `${locale} ${viewport.width} POST ${path} (${status})`);
        }
        await context.close();
      }
    }
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('Target Size (Minimum), WCAG 2.2 SC 2.5.8: every pointer target not inline in a sentence is at least 24 by 24 CSS px, at 390 and 1280 px, in every language', () => {
    assert.deepEqual(small, [], `targets under ${MINIMUM_TARGET}×${MINIMUM_TARGET} CSS px:\n${small.join('\n')}`);
  });

  test('no console page is wider than its window, at 390 or 1280 px, in any language (a table scrolls in its own box)', () => {
    assert.deepEqual(wide, [], `pages wider than the window:\n${wide.join('\n')}`);
  });

  test('Label in Name, WCAG 2.5.3: the accessible name of every link and button that shows words starts with those words, in every language', () => {
    assert.deepEqual(misnamed, [], `names that do not start with the words shown:\n${misnamed.join('\n')}`);
  });
});
