/**
 * Words a reader of each language sees as its sites write them (issue 32): "just now" in
 * Chinese, a long wait in hours, one password rule worded once wherever a password is chosen, and
 * a signed-out page that says so once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { generateOpaqueId, hashSecret } from '../../src/core/credentials/formats.js';
import { LOCALES } from '../../src/core/locales.js';
import { relativeTime } from '../../src/core/site-time.js';
import { retryWait } from '../../src/core/time.js';
import { retryMessage } from '../../src/http/pages.js';
import type { Throttled } from '../../src/http/routes/settings-problems.js';
import { translator } from '../../src/i18n/catalogs.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor } from '../site/visitor.js';

test('a time within the minute reads "just now" as Chinese sites write it: 刚刚 / 剛剛', () => {
  const now = Date.UTC(2026, 10, 24, 12);
  assert.equal(relativeTime(now - 20_000, now, 'zh-CN'), '刚刚');
  assert.equal(relativeTime(now, now, 'zh-TW'), '剛剛');
  assert.equal(relativeTime(now - 20_000, now, 'en'), 'now');
  assert.equal(relativeTime(now - 3 * 60_000, now, 'zh-CN'), '3分钟前');
});

test('a recent time\'s words never contradict the full time beside them: a day and more ago is counted, never "yesterday" or "last month"', () => {
  // 2026-11-25 09:00 UTC+8, and 37 hours before it: 2026-11-23 20:00 UTC+8, two days back on the
  // calendar, which "昨天" beside "（2026-11-23 20:00 UTC+8）" would contradict.
  const now = Date.UTC(2026, 10, 25, 1);
  assert.equal(relativeTime(now - 37 * 3_600_000, now, 'zh-CN'), '1天前');
  assert.equal(relativeTime(now - 37 * 3_600_000, now, 'zh-TW'), '1 天前');
  assert.equal(relativeTime(now - 37 * 3_600_000, now, 'en'), '1 day ago');
  assert.equal(relativeTime(now - 60 * 3_600_000, now, 'zh-CN'), '2天前');
  // 2026-12-31 and 30 days before it, 2026-12-01: the same month, not "上个月".
  const newYearsEve = Date.UTC(2026, 11, 31, 1);
  assert.equal(relativeTime(newYearsEve - 30 * 86_400_000, newYearsEve, 'zh-CN'), '1个月前');
  assert.equal(relativeTime(newYearsEve - 30 * 86_400_000, newYearsEve, 'en'), '1 month ago');
});

test('a wait to try again reads in seconds under a minute, minutes under an hour, and hours and minutes past it, never rounded down, in every language', () => {
  const waits: Array<[number, Record<string, string>]> = [
    [30, { en: 'in 30 seconds', 'zh-CN': '请在 30 秒后', 'zh-TW': '請在 30 秒後' }],
    [61, { en: 'in 2 minutes', 'zh-CN': '请在 2 分钟后', 'zh-TW': '請在 2 分鐘後' }],
    [3599, { en: 'in 1 hour.', 'zh-CN': '请在 1 小时后', 'zh-TW': '請在 1 小時後' }],
    [36_000, { en: 'in 10 hours.', 'zh-CN': '请在 10 小时后', 'zh-TW': '請在 10 小時後' }],
    // 601 minutes: what the address's daily limit said before (a tester's "请在 601 分钟后重试").
    [36_060, { en: 'in 10 hours and 1 minute.', 'zh-CN': '请在 10 小时 1 分钟后', 'zh-TW': '請在 10 小時 1 分鐘後' }],
    [86_399, { en: 'in 24 hours.', 'zh-CN': '请在 24 小时后', 'zh-TW': '請在 24 小時後' }],
    [7_260, { en: 'in 2 hours and 1 minute.', 'zh-CN': '请在 2 小时 1 分钟后', 'zh-TW': '請在 2 小時 1 分鐘後' }],
    [7_320, { en: 'in 2 hours and 2 minutes.', 'zh-CN': '请在 2 小时 2 分钟后', 'zh-TW': '請在 2 小時 2 分鐘後' }],
  ];
  const throttled: Throttled[] = ['settings.tooManyPasswords', 'settings.tooManyAttempts', 'settings.tooManyAvatars', 'security.tooManyCodes', 'recovery.throttled'];
  for (const locale of LOCALES) {
    const t = translator(locale);
    for (const [seconds, expected] of waits) {
      const said = [...throttled.map((key) => t.text(key, retryWait(seconds))), retryMessage(t.text('sign-in.tooManySignIns'), seconds, t)];
      for (const message of said) {
        assert.ok(message.includes(expected[locale]!), `${locale}, ${seconds} s: "${message}" says ${expected[locale]}`);
        assert.doesNotMatch(message, /\d{3,} (minutes|分钟|分鐘)/, `${locale}: ${message}`);
      }
    }
  }
});

forEachDatabase('the words of the pages', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const hintOf = (text: string) => /<p class="hint" id="password-hint">([\s\S]*?)<\/p>/.exec(text)?.[1];

  test('the sign-up page and the reset page word the password rule the same, in every language', async () => {
    const user = await createAccount(t.deps.stores, t.clock, { username: `w${randomBytes(4).toString('hex')}`, password: 'correct horse battery' });
    const token = generateOpaqueId();
    await t.deps.stores.memberEmails.createLink({ tokenHash: hashSecret(token), userId: user.id, purpose: 'reset_password', addressKey: null, expiresAt: t.clock.now() + 60_000 }, t.clock.now());
    for (const locale of LOCALES) {
      const visitor = new Visitor(t.baseUrl);
      visitor.cookies.set('lang', locale);
      const [signUp, reset] = [await visitor.get('/signup'), await visitor.get(`/password/reset?token=${token}`)];
      assert.equal(reset.status, 200);
      assert.ok(hintOf(signUp.text), `${locale}: the sign-up page has a password hint`);
      assert.equal(hintOf(reset.text), hintOf(signUp.text), locale);
    }
  });

  test('the signed-out page says it once', async () => {
    for (const locale of LOCALES) {
      const visitor = new Visitor(t.baseUrl);
      visitor.cookies.set('lang', locale);
      const page = (await visitor.get('/logout')).text;
      const heading = /<h1>([\s\S]*?)<\/h1>/.exec(page)?.[1];
      assert.ok(heading, locale);
      const body = page.slice(page.indexOf('<body'));
      assert.equal(body.split(heading).length - 1, 1, `${locale}: "${heading}" is said again`);
    }
  });
});
