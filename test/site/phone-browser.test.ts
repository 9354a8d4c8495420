/**
 * A member's pages at a phone's width, measured in headless Chromium as WCAG 2.2 and Chinese
 * typesetting measure them: every pointer target big enough for a finger (SC 2.5.8), every
 * control's name starting with the words it shows (SC 2.5.3), and a Latin name set apart from the
 * Han characters around it (W3C "Requirements for Chinese Text Layout", 3.2.2). One browser and
 * one member for all of them; each test reports every problem it finds, not the first. With
 * PHONE_SHOTS=1 each page is saved under /tmp/phone-shots/ to be looked at.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/chromium.js';
import { MINIMUM_TARGET, namesNotStartingWithLabel, pageWidth, smallTargets } from '../support/page-measures.js';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { writePost } from '../../src/core/community/posts.js';
import { hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { LOCALES, type Locale } from '../../src/core/locales.js';
import { pkcePair } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';

const PHONE = { width: 390, height: 844 };
/** With PHONE_SHOTS=1 every page walked is saved there, to look at. */
const SHOTS = process.env.PHONE_SHOTS === '1' ? '/tmp/phone-shots' : undefined;
const USERNAME = 'shouji';
const PASSWORD = 'a phone in the hand';

describe('a member\'s pages on a phone, in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  /** Signed in as the member; another context is signed out. */
  let member: BrowserContext;
  let visitor: BrowserContext;
  /** The pages a member meets, signed out and signed in. */
  const signedOutPaths = ['/login', '/signup', '/password/forgot'];
  let signedInPaths: string[];
  /** The consent page of an app with a Latin name and of one with a Chinese name. */
  let consentLatin: string;
  let consentChinese: string;

  before(async () => {
    t = await startTestApp(temporarySqliteDatabase());
    browser = await launchChromium();
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    const { stores } = t.deps;
    const user = await createAccount(stores, t.clock, { username: USERNAME, nickname: '手机用户', password: PASSWORD });
    const post = await writePost(stores, t.clock, { authorId: user.id, title: '海边的早晨', body: '雾在六点四十散了。[照片](https://photos.example/dawn)', category: '摄影', status: 'published' });
    await writePost(stores, t.clock, { authorId: user.id, title: '草稿', body: '还没写完。', category: '摄影', status: 'draft' });
    await createPersonalToken(stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: '夜间备份', scopes: ['profile:read'], expiresInDays: 30 });
    // An app the member authorized: its card and the disclosure that revokes it.
    const { client: authorized } = await registerClient(stores, t.clock, {
      name: 'Photo Printer', type: 'confidential', redirectUris: ['https://printer.example/cb'], homepageUrl: 'https://printer.example', description: '打印你最好的帖子。',
    });
    const now = t.clock.now();
    await stores.consents.save(user.id, authorized.clientId, 'profile:read', now);
    await stores.grants.create({ userId: user.id, clientId: authorized.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    // And one whose name is a single word longer than the phone is wide (attack89: 509 px at 390).
    const { client: longNamed } = await registerClient(stores, t.clock, {
      name: 'Supercalifragilisticexpialidocious-Extraordinarily-Long-Application-Name', type: 'confidential', redirectUris: ['https://long.example/cb'],
    });
    await stores.consents.save(user.id, longNamed.clientId, 'profile:read', now);
    // An app of 80 letters with no place to break, authorized: the security log names it (attack92: 1,332 px at 390).
    await stores.securityEvents.insert({ userId: user.id, kind: 'app.authorized', createdAt: now, address: '192.0.2.1', device: 'Chrome', detail: { app: 'M'.repeat(80), client_id: longNamed.clientId, scope: 'profile:read' } });
    // An app the member made, a passkey and another signed-in browser: their rows carry buttons.
    const { client: own } = await registerClient(stores, t.clock, { name: '我的应用', type: 'confidential', redirectUris: ['https://mine.example/cb'], ownerId: user.id });
    await stores.passkeys.insert({ credentialId: 'phone-test-key', userId: user.id, name: 'iPhone', publicKey: 'pk', counter: 0, transports: ['internal'], backedUp: true }, now);
    await stores.sessions.create({ idHash: hashSecret(randomBytes(32).toString('base64url')), userId: user.id, authTime: now, expiresAt: now + 3_600_000, amr: ['pwd'], userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/140.0.0.0', address: '192.0.2.1' }, now);

    const consent = async (name: string) => {
      const { client } = await registerClient(stores, t.clock, { name, type: 'public', redirectUris: ['https://app.example/cb'] });
      return `/oauth/authorize?${new URLSearchParams({
        response_type: 'code', client_id: client.clientId, redirect_uri: 'https://app.example/cb', scope: 'openid profile:read',
        state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      })}`;
    };
    consentLatin = await consent('Demo App');
    consentChinese = await consent('读书笔记');
    signedInPaths = [
      '/', `/posts/${post.id}`, `/u/${USERNAME}`, consentLatin,
      '/settings/profile', '/settings/email', '/settings/tokens', '/settings/applications', '/settings/developers',
      `/settings/developers/${own.clientId}`, '/settings/security', '/logout', '/docs',
    ];

    visitor = await browser.newContext({ locale: 'zh-CN', timezoneId: 'Asia/Shanghai', viewport: PHONE });
    member = await browser.newContext({ locale: 'zh-CN', timezoneId: 'Asia/Shanghai', viewport: PHONE });
    const page = await member.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.locator('#username').fill(USERNAME);
    await page.locator('#password').fill(PASSWORD);
    await Promise.all([page.waitForURL(`${t.baseUrl}/`), page.locator('form[action="/login"] button[type=submit]').click()]);
    await page.close();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Visits every page in `locale` (the `lang` cookie), signed out and then signed in, and calls `look` on each. */
  async function walk(locale: Locale, look: (page: Page, path: string) => Promise<void>): Promise<void> {
    for (const [context, paths] of [[visitor, signedOutPaths], [member, signedInPaths]] as const) {
      await context.addCookies([{ name: 'lang', value: locale, url: t.baseUrl }]);
      const page = await context.newPage();
      for (const path of paths) {
        const response = await page.goto(`${t.baseUrl}${path}`);
        assert.equal(response?.status(), 200, `${path} answers 200`);
        await look(page, path);
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/${locale}${path.split('?')[0]!.replace(/\//g, '_')}.png`, fullPage: true });
        // What a disclosure holds (the button that revokes an app's access) is measured open too.
        if (await page.locator('details:not([open])').count() > 0) {
          await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
          await look(page, `${path} (disclosures open)`);
        }
      }
      await page.close();
    }
  }

  test('Target Size (Minimum), WCAG 2.2 SC 2.5.8: every pointer target not inline in a sentence is at least 24 by 24 CSS px at 390 px in zh-CN', async () => {
    const problems: string[] = [];
    await walk('zh-CN', async (page, path) => {
      for (const line of await smallTargets(page)) problems.push(`${path}: ${line}`);
    });
    assert.deepEqual(problems, [], `targets under ${MINIMUM_TARGET}×${MINIMUM_TARGET} CSS px:\n${problems.join('\n')}`);
  });
  test('no page is wider than the phone, in any language, an app named by one word longer than the screen included', async () => {
    const problems: string[] = [];
    for (const locale of LOCALES) {
      await walk(locale, async (page, path) => {
        const width = await pageWidth(page);
        if (width > PHONE.width) problems.push(`${locale} ${path}: ${width} px`);
      });
    }
    assert.deepEqual(problems, [], `pages wider than ${PHONE.width} px:\n${problems.join('\n')}`);
  });

  test('no page is wider than a phone of 320 or 360 px, at the normal text size and at twice it, in English and Chinese: its document is no wider than its window', async () => {
    /** The authenticator app's enrolment, the answer to a form on the security page. */
    const enrolTotp = async (page: Page) => {
      await Promise.all([page.waitForURL(/\/settings\/security/), page.locator('form:has(input[value="totp-start"]) button[type=submit]').click()]);
      await page.locator('input[value="totp-confirm"]').waitFor({ state: 'attached' });
    };
    // Every page a member reaches: those walked above, writing a post, the page an expired reset
    // link opens, and the authenticator app's enrolment.
    const visits: { context: BrowserContext; path: string; then?: (page: Page) => Promise<void> }[] = [
      ...[...signedOutPaths, '/password/reset?token=expired'].map((path) => ({ context: visitor, path })),
      ...[...signedInPaths, consentChinese, '/posts/new'].map((path) => ({ context: member, path })),
      { context: member, path: '/settings/security', then: enrolTotp },
    ];
    const problems: string[] = [];
    for (const locale of ['en', 'zh-CN'] as const) {
      for (const context of [visitor, member]) await context.addCookies([{ name: 'lang', value: locale, url: t.baseUrl }]);
      for (const { context, path, then } of visits) {
        const page = await context.newPage();
        for (const width of [320, 360]) {
          await page.setViewportSize({ width, height: 800 });
          const response = await page.goto(`${t.baseUrl}${path}`);
          assert.ok(response && response.status() < 500, `${path} answers ${response?.status()}`);
          await then?.(page);
          const where = `${locale} ${width} px, ${path}${then ? ` (${then.name})` : ''}`;
          await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
          // The browser's text size doubled: the root's font size, which every rem and em follows.
          for (const textSize of ['100%', '200%']) {
            await page.evaluate((size) => { document.documentElement.style.fontSize = size; }, textSize);
            const laidOut = await pageWidth(page);
            if (laidOut > width) problems.push(`${where}, text ${textSize}: ${laidOut} px`);
          }
        }
        await page.close();
      }
    }
    assert.deepEqual(problems, [], `pages wider than their window:\n${problems.join('\n')}`);
  });

  test('the profile\'s selects show their chosen option whole at 390 px, the time zone\'s included, and no element of the page is wider than the phone, in every language', async () => {
    const problems: string[] = [];
    const page = await member.newPage();
    for (const locale of LOCALES) {
      await member.addCookies([{ name: 'lang', value: locale, url: t.baseUrl }]);
      await page.goto(`${t.baseUrl}/settings/profile`);
      problems.push(...(await page.evaluate(() => {
        const found: string[] = [];
        for (const element of document.querySelectorAll('body *')) {
          const box = element.getBoundingClientRect();
          // Past the right edge (the skip link waits off the left one until focused).
          if (box.width > 0 && box.right > innerWidth + 0.5) found.push(`${element.localName}#${element.id}: ${box.left.toFixed(0)}–${box.right.toFixed(0)} px`);
        }
        // A select shows its chosen option on one line, cut where it is too long: as wide as a
        // copy of it holding that option alone (its words, padding and arrow), it shows it whole.
        for (const select of document.querySelectorAll('select')) {
          const alone = select.cloneNode(false) as HTMLSelectElement;
          alone.append(select.selectedOptions[0]!.cloneNode(true));
          alone.style.cssText = 'position: absolute; width: auto; max-width: none';
          select.after(alone);
          const needed = alone.getBoundingClientRect().width;
          alone.remove();
          const width = select.getBoundingClientRect().width;
          if (needed > width + 0.5) found.push(`select#${select.id} "${select.selectedOptions[0]!.text}" cut: ${needed.toFixed(0)} px in ${width.toFixed(0)}`);
        }
        return found;
      })).map((line) => `${locale}: ${line}`));
    }
    await page.close();
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test('Label in Name, WCAG 2.5.3: the accessible name of every link and button that shows words starts with those words, in every language', async () => {
    const problems: string[] = [];
    for (const locale of LOCALES) {
      await walk(locale, async (page, path) => {
        for (const line of await namesNotStartingWithLabel(page)) problems.push(`${locale} ${path}: ${line}`);
      });
    }
    assert.deepEqual(problems, [], `names that do not start with the words shown:\n${problems.join('\n')}`);
  });

  test('a table of records stacked for a phone is still a table to a screen reader: each row a row, each heading a column header, each cell a cell, named in the markup for WebKit (WAI-ARIA 1.2 "table")', async () => {
    const problems: string[] = [];
    let tables = 0;
    await walk('zh-CN', async (page, path) => {
      for (const table of await page.locator('table.stack').all()) {
        tables += 1;
        const [rows, headings, cells] = await Promise.all(['tr', 'th', 'td'].map((tag) => table.locator(tag).count()));
        // WebKit computes no table roles for elements displayed as blocks, as a phone shows these:
        // only the roles the markup names reach VoiceOver, so every element must name its own.
        const unnamed = await table.evaluate((element) => [element, ...element.querySelectorAll('thead, tbody, tr, th, td')]
          .filter((e) => e.getAttribute('role') !== ({ TABLE: 'table', THEAD: 'rowgroup', TBODY: 'rowgroup', TR: 'row', TH: 'columnheader', TD: 'cell' } as Record<string, string>)[e.tagName])
          .map((e) => e.tagName.toLowerCase()));
        if (unnamed.length > 0) problems.push(`${path}: no role named on ${[...new Set(unnamed)].join(', ')}`);
        // What the accessibility tree holds, as a screen reader is handed it, not the markup.
        const tree = await table.ariaSnapshot();
        const roles = tree.split('\n').map((line) => /^\s*- (\w+)/.exec(line)?.[1]);
        const count = (role: string) => roles.filter((r) => r === role).length;
        if (roles[0] !== 'table') problems.push(`${path}: the table is "${tree.split('\n')[0]}"`);
        for (const [role, want] of [['row', rows], ['columnheader', headings], ['cell', cells]] as const) {
          if (count(role) !== want) problems.push(`${path}: ${count(role)} of ${want} ${role}s`);
        }
      }
    });
    assert.ok(tables >= 4, `stacked tables walked: ${tables}`);
    assert.deepEqual(problems, []);
  });

  test('the header\'s @handle of a signed-in member, or the username shown alone when there is no nickname, never breaks inside: on one line within the window, whole or cut with an ellipsis, the link named by all of it, at 320 and 360 px, in English and Chinese, at twice the text size too', async () => {
    // The widest handle there can be (30 of the widest Latin letter) beside a long Chinese
    // nickname, a long handle of ordinary letters beside a short Latin one, and a username as
    // wide with no nickname, which the header shows alone.
    const members = [['WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW', '一个很长很长的昵称名字一二三四五六七八九十'], ['Supercalifragilisticexpialidoc', 'Nick'], ['MMMMMMMMMMMMMMMMMMMMMMMMMMMMMM', undefined]] as const;
    for (const [username, nickname] of members) await createAccount(t.deps.stores, t.clock, { username, nickname, password: PASSWORD });
    const problems: string[] = [];
    for (const [username] of members) {
      for (const width of [320, 360]) {
        for (const locale of ['en', 'zh-CN'] as const) {
          const context = await browser.newContext({ locale, viewport: { width, height: 800 } });
          await context.addCookies([{ name: 'lang', value: locale, url: t.baseUrl }]);
          const page = await context.newPage();
          await page.goto(`${t.baseUrl}/login`);
          await page.locator('#username').fill(username);
          await page.locator('#password').fill(PASSWORD);
          await Promise.all([page.waitForURL(`${t.baseUrl}/`), page.locator('form[action="/login"] button[type=submit]').click()]);
          for (const textSize of ['100%', '200%']) {
            await page.evaluate((size) => { document.documentElement.style.fontSize = size; }, textSize);
            // The word the member's link ends with: the @handle, or the username alone.
            const seen = await page.locator('.site-header a.person > :last-child').evaluate((handle) => {
              // The lines the handle's words are set on, as the text's own boxes tell them.
              const words = document.createRange();
              words.selectNodeContents(handle);
              const lines = new Set([...words.getClientRects()].map((box) => Math.round(box.top))).size;
              const box = handle.getBoundingClientRect();
              return {
                lines, right: box.right, cut: handle.scrollWidth > handle.clientWidth,
                ellipsis: getComputedStyle(handle).textOverflow === 'ellipsis', headerWidth: handle.closest('header')!.scrollWidth,
              };
            });
            const where = `${username} ${locale} ${width} px, text ${textSize}`;
            if (seen.lines !== 1) problems.push(`${where}: the handle is set on ${seen.lines} lines`);
            if (seen.right > width) problems.push(`${where}: the handle ends at ${seen.right} px`);
            if (seen.cut && !seen.ellipsis) problems.push(`${where}: the handle is cut without an ellipsis`);
            if (seen.headerWidth > width) problems.push(`${where}: the header is ${seen.headerWidth} px wide`);
            const named = await page.locator('.site-header a.person').ariaSnapshot();
            if (!named.includes(username)) problems.push(`${where}: the link is named ${named}`);
          }
          await context.close();
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('Chinese line breaking (W3C clreq 3.1.7): the full-width brackets around a shown time stay on its line, so no line ends with "（" or starts with "）", at 390 px in zh-CN and zh-TW', async () => {
    const problems: string[] = [];
    for (const locale of ['zh-CN', 'zh-TW'] as const) {
      await walk(locale, async (page, path) => {
        const stranded = await page.evaluate(() => {
          const found: string[] = [];
          for (const time of document.querySelectorAll('time')) {
            const boxes = time.getClientRects();
            if (boxes.length === 0) continue;
            // The bracket just before the time and the one just after, each beside the box of the time next to it.
            for (const [text, offset, box, bracket, where] of [
              [time.previousSibling, -1, boxes[0]!, '（', 'ends the line before'],
              [time.nextSibling, 0, boxes[boxes.length - 1]!, '）', 'starts the line after'],
            ] as const) {
              if (!(text instanceof Text) || text.data.at(offset) !== bracket) continue;
              const range = document.createRange();
              const at = offset < 0 ? text.data.length - 1 : 0;
              range.setStart(text, at);
              range.setEnd(text, at + 1);
              const mark = range.getBoundingClientRect();
              if (mark.height > 0 && (mark.bottom <= box.top || mark.top >= box.bottom)) found.push(`"${bracket}" ${where} ${time.textContent}`);
            }
          }
          return found;
        });
        for (const line of stranded) problems.push(`${locale} ${path}: ${line}`);
      });
    }
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test('Chinese beside Latin (W3C clreq 3.2.2): a Latin app name between Han characters stands a narrow space apart from them, a Chinese name stands close', async () => {
    const page = await member.newPage();
    await member.addCookies([{ name: 'lang', value: 'zh-CN', url: t.baseUrl }]);
    const problems: string[] = [];
    for (const [path, name, spaced] of [[consentLatin, 'Demo App', true], [consentChinese, '读书笔记', false]] as const) {
      await page.goto(`${t.baseUrl}${path}`);
      // The heading "允许<b>{app}</b>使用你的账号？" against a copy of it set with no spacing of any kind:
      // how much further the name, and the character after it, stand. (Chromium widens the
      // character before a boundary, so the gap is not between the boxes: it is measured by
      // where the glyphs start.)
      const shift = await page.locator('h1 strong').evaluate((strong) => {
        const heading = strong.parentElement!;
        const bare = heading.cloneNode(true) as HTMLElement;
        bare.style.cssText = 'position: absolute; left: 0; top: 0; white-space: nowrap; text-autospace: no-autospace';
        for (const element of bare.querySelectorAll<HTMLElement>('*')) element.style.cssText = 'margin: 0; padding: 0; text-autospace: no-autospace';
        heading.after(bare);
        const [spaced, plain] = [heading, bare].map((h1) => {
          const name = h1.querySelector('strong')!;
          const first = h1.firstChild as Text;
          const next = document.createRange();
          next.setStart(name.nextSibling!, 0);
          next.setEnd(name.nextSibling!, 1);
          const begin = document.createRange();
          begin.setStart(first, 0);
          begin.setEnd(first, 1);
          const origin = begin.getBoundingClientRect().left;
          return { name: name.getClientRects()[0]!.left - origin, after: next.getBoundingClientRect().left - origin, top: [begin.getBoundingClientRect().top, next.getBoundingClientRect().top] };
        }) as [{ name: number; after: number; top: number[] }, { name: number; after: number; top: number[] }];
        bare.remove();
        const em = parseFloat(getComputedStyle(strong).fontSize);
        return { before: (spaced.name - plain.name) / em, after: (spaced.after - plain.after) / em - (spaced.name - plain.name) / em, oneLine: spaced.top[0] === spaced.top[1] };
      });
      if (!shift.oneLine) problems.push(`${name}: the heading wraps around the name`);
      // The marks a browser without text-autospace spaces by (this Chromium has it, so they are not what spaces it here).
      const marks = (await page.locator('h1 strong').getAttribute('class'))?.split(' ').filter((c) => c.startsWith('latin-')).join(' ');
      if (marks !== (spaced ? 'latin-start latin-end' : '')) problems.push(`${name}: marked "${marks}"`);
      for (const side of ['before', 'after'] as const) {
        const gap = shift[side];
        if (spaced ? gap < 0.08 : Math.abs(gap) > 0.01) problems.push(`${name}: ${gap.toFixed(3)} em ${side} it (${spaced ? 'a narrow space, about 1/8 em, wanted' : 'none wanted'})`);
      }
    }
    await page.close();
    assert.deepEqual(problems, []);
  });

  test('an app\'s name saved before marks on one character were bounded draws nothing over the consent page\'s words and buttons at 390 px: the buttons, the scopes and the text under the name look as they do beside a name without its marks, and a long run of letters stays within the page', async () => {
    // Nonspacing marks add no width, so the two pages are laid out alike and differ only where marks are drawn.
    const consent = async (name: string) => {
      const client = await t.deps.stores.clients.create({
        clientId: `stacked-${randomBytes(6).toString('hex')}`, name, description: 'Reads posts.', homepageUrl: '', ownerId: null, type: 'public',
        redirectUris: ['https://app.example/cb'], allowedScopes: ['profile:read', 'posts:read'], secretHash: null, idTokenAlg: 'RS256', selfRegistered: true,
      }, t.clock.now());
      return `${t.baseUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code', client_id: client.clientId, redirect_uri: 'https://app.example/cb', scope: 'profile:read posts:read',
        state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      })}`;
    };
    const marks = '\u0301\u0316'.repeat(30);
    const plain = await consent('Agent Tools');
    const stacked = await consent([...'Agent Tools'].map((c) => c === ' ' ? c : `${c}${marks}`).join(''));
    const long = await consent('M'.repeat(79));
    await member.addCookies([{ name: 'lang', value: 'en', url: t.baseUrl }]);
    const page = await member.newPage();
    const shots = async (url: string) => {
      assert.equal((await page.goto(url))?.status(), 200);
      // Every block under the heading but those that hold the name: the buttons, the scopes, the other paragraphs.
      const below = page.locator('main :is(button, ul, h2, p):not(:has(.app-name)):below(h1)');
      return Promise.all((await below.all()).map((element) => element.screenshot()));
    };
    const withoutMarks = await shots(plain);
    const withMarks = await shots(stacked);
    assert.equal(withMarks.length, withoutMarks.length);
    assert.ok(withMarks.length >= 5, 'buttons, scopes and paragraphs compared');
    const differing = withMarks.filter((shot, i) => !shot.equals(withoutMarks[i]!)).length;
    assert.equal(differing, 0, `${differing} of ${withMarks.length} elements under the name drawn over`);
    await page.goto(long);
    assert.ok(await pageWidth(page) <= PHONE.width, 'a long run of letters breaks within the page');
    await page.close();
  });
});
