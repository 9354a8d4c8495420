/**
 * The settings and security pages in the member's language and clock (INTERFACE section 12, issue
 * 32), over real HTTP on each database: the profile saves the nickname, language and time zone;
 * a refused one comes back in the page's language; times are in the member's zone with its
 * offset; and no page in Chinese shows an English sentence.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor, signedInMember } from '../site/visitor.js';
import type { User } from '../../src/core/accounts/ports.js';
import { englishSentences } from './untranslated.js';
import { currentZoneName, timeZoneNames } from '../../src/core/site-time.js';

const PASSWORD = 'correct horse battery staple';

/** Names that stay as written in every language: the product's, protocols', formats', apps' and people's. */
const PROPER_NOUNS = [
  'Authorization: Bearer', 'Google Authenticator', 'Ctrl+C', 'Demo App', 'Aegis, FreeOTP', 'Aegis', 'FreeOTP', '1Password',
  // The time zone picker's places (America/Port_of_Spain is shown "Port of Spain").
  ...timeZoneNames().map((zone) => currentZoneName(zone).split('/').pop()!.replaceAll('_', ' ')),
  'PNG, JPEG, WebP or GIF', 'English',
];

forEachDatabase('the settings pages in the member\'s language and clock', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(async () => t.close());

  const member = () => signedInMember(t, `settler${++counter}`, PASSWORD);
  const h1 = (text: string) => /<h1[^>]*>([^<]*)<\/h1>/.exec(text)?.[1];

  test('the profile form saves the nickname, language and time zone, and the page speaks the saved language at once', async () => {
    const { user, visitor } = await member();
    const saved = await visitor.post('/settings/profile', { nickname: '  小明  ', bio: '', language: 'zh-TW', time_zone: 'Asia/Taipei' });
    assert.equal(saved.status, 303);
    assert.equal(saved.location, '/settings/profile?notice=profile');
    const stored = await t.deps.stores.users.findById(user.id);
    assert.deepEqual([stored?.nickname, stored?.language, stored?.timeZone], ['小明', 'zh-TW', 'Asia/Taipei']);
    const page = await visitor.get(saved.location!);
    assert.match(page.text, /<html lang="zh-TW">/);
    assert.match(page.text, /個人資料已儲存/);
    assert.match(page.text, /<option value="Asia\/Taipei" selected>台北標準時間（UTC\+8）· Asia\/Taipei<\/option>/);
    assert.match(page.text, /<option value="zh-TW" lang="zh-TW" selected>繁體中文<\/option>/);

    assert.equal((await visitor.post('/settings/profile', { nickname: '', language: '', time_zone: '' })).status, 303);
    const reset = await t.deps.stores.users.findById(user.id);
    assert.deepEqual([reset?.nickname, reset?.language, reset?.timeZone], [user.username, null, null], 'empty: the username, the browser\'s language, the site\'s zone');
  });

  test('the time-zone list names each zone in the page\'s language where the runtime has a name for it, beside its IANA name and offset, and keeps a chosen zone it does not list', async () => {
    const { visitor } = await member();
    const option = (text: string, zone: string) => new RegExp(`<option value="${zone.replaceAll('/', '\\/').replaceAll('+', '\\+')}">([^<]*)</option>`).exec(text)?.[1];
    await visitor.post('/settings/profile', { language: 'zh-CN' });
    const chinese = (await visitor.get('/settings/profile')).text;
    assert.match(chinese, /<option value="" selected>本站时区（UTC\+8）<\/option>/);
    assert.match(chinese, /<p class="hint" id="time-zone-hint">[^<]*本站时区为中国标准时间（UTC\+8）· Asia\/Shanghai。<\/p>/);
    assert.equal(option(chinese, 'Asia/Calcutta'), '印度时间（UTC+5:30）· Asia/Kolkata', 'a member from Kolkata finds India by its name, and the city as IANA writes it now');
    assert.equal(option(chinese, 'Europe/Kiev'), '东欧时间（UTC+2）· Europe/Kyiv', 'named as it is today, not as in 1970 (Moscow\'s zone)');
    await visitor.post('/settings/profile', { time_zone: 'Etc/GMT+5' });
    assert.match((await visitor.get('/settings/profile')).text, /<option value="Etc\/GMT\+5" selected>UTC-5 · Etc\/GMT\+5<\/option>/,
      'a zone the runtime takes but does not list is shown when chosen, its offset first where a name would be');
    await visitor.post('/settings/profile', { language: 'en' });
    const english = (await visitor.get('/settings/profile')).text;
    assert.equal(option(english, 'America/New_York'), 'Eastern Time (UTC-5) · America/New York');
  });

  test('a zone the runtime names by its offset alone is labelled by that offset, and no label says the same thing twice: UTC is "UTC", in every language', async () => {
    const { visitor } = await member();
    const selected = (text: string) => /<option value="([^"]*)" selected>([^<]*)<\/option>/.exec(text.slice(text.indexOf('id="time_zone"')))?.slice(1);
    for (const language of ['en', 'zh-CN', 'zh-TW']) {
      await visitor.post('/settings/profile', { language, time_zone: 'Etc/UTC' });
      const page = (await visitor.get('/settings/profile')).text;
      assert.deepEqual(selected(page), ['UTC', 'UTC'], `${language}: saved as UTC, shown as UTC, never "UTC（UTC）"`);
      await visitor.post('/settings/profile', { time_zone: 'Etc/GMT-3' });
      assert.deepEqual(selected((await visitor.get('/settings/profile')).text), ['Etc/GMT-3', 'UTC+3 · Etc/GMT-3'], `${language}: the offset first, as a name stands`);
      // Every zone listed: its name, offset and IANA name, none of them twice.
      const repeated = [...page.matchAll(/<option value="[^"]+"(?: selected)?>([^<]*)<\/option>/g)].map((m) => m[1]!)
        .filter((label) => {
          const pieces = label.split(/\s*[（）()·]\s*/).filter((piece) => piece !== '');
          return new Set(pieces).size !== pieces.length;
        });
      assert.deepEqual(repeated, [], language);
    }
  });

  test('a zone is saved under the runtime\'s own name, however it was spelt, so that no zone is listed twice', async () => {
    const { user, visitor } = await member();
    for (const [sent, saved] of [['asia/shanghai', 'Asia/Shanghai'], ['PRC', 'Asia/Shanghai'], ['Asia/Kolkata', 'Asia/Calcutta'], ['US/Pacific', 'America/Los_Angeles']]) {
      assert.equal((await visitor.post('/settings/profile', { time_zone: sent! })).status, 303, sent);
      assert.equal((await t.deps.stores.users.findById(user.id))?.timeZone, saved, sent);
    }
    const page = (await visitor.get('/settings/profile')).text;
    assert.equal([...page.matchAll(/value="America\/Los_Angeles"/g)].length, 1, 'listed once, and selected');
  });

  test('a saved zone this runtime does not know reads as the site\'s: the pages and the mails of that member do not fail on it', async () => {
    const { user, visitor } = await member();
    assert.equal(await t.deps.stores.users.updateProfile(user.id, { timeZone: 'Mars/Olympus' }, t.clock.now()), true, 'as a zone saved under another ICU');
    const security = await visitor.get('/settings/security');
    assert.equal(security.status, 200);
    assert.match(security.text, /UTC\+8/, 'times in the site\'s zone');
    assert.equal((await visitor.get('/settings/profile')).status, 200);
  });

  test('the personal-token form describes each scope in the consent page\'s words, naming nothing the site does not hold', async () => {
    const { visitor } = await member();
    await visitor.post('/settings/profile', { language: 'zh-CN' });
    const form = (await visitor.get('/settings/tokens')).text;
    assert.match(form, /<code>profile:read<\/code> <span class="muted">昵称、头像、个人简介、会员身份、等级和经验值。[^<]*你的邮箱地址和账号状态。/);
    assert.match(form, /<code>posts:read<\/code> <span class="muted">你已发布的帖子列表/);
    assert.doesNotMatch(form, /钱包|会员状态|该用户/);
  });

  test('a refused nickname or time zone shows the form again, 400, with the problem in the page\'s language and nothing saved', async () => {
    const { user, visitor } = await member();
    await visitor.post('/settings/profile', { language: 'zh-CN' });
    const refused = await visitor.post('/settings/profile', { nickname: '🙂🙂', time_zone: 'Mars/Olympus', bio: 'kept in the form' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /<html lang="zh-CN">/);
    assert.match(refused.text, /昵称：/, 'the summary names the field');
    assert.match(refused.text, /id="nickname-error">[^<]*[\u4e00-\u9fff]/, 'the nickname\'s problem in Chinese');
    assert.match(refused.text, /id="time_zone-error">[^<]*[\u4e00-\u9fff]/, 'the time zone\'s problem in Chinese');
    assert.match(refused.text, /id="time_zone"[^>]*aria-invalid="true"/);
    assert.match(refused.text, /value="kept in the form"/);
    const stored = await t.deps.stores.users.findById(user.id);
    assert.deepEqual([stored?.nickname, stored?.timeZone, stored?.bio], [user.username, null, ''], 'nothing saved');
  });

  test('a refused password change names the problem in the page\'s language: a wrong current password, a new one equal to it', async () => {
    const { visitor } = await member();
    for (const locale of ['zh-CN', 'zh-TW'] as const) {
      visitor.cookies.set('lang', locale);
      for (const fields of [
        { current_password: 'not my password', new_password: 'a brand new passphrase' },
        { current_password: PASSWORD, new_password: PASSWORD },
      ]) {
        const refused = await visitor.post('/settings/security', { action: 'change-password', ...fields });
        assert.equal(refused.status, 400, JSON.stringify(fields));
        assert.match(refused.text, new RegExp(`<html lang="${locale}">`));
        assert.deepEqual(englishSentences(refused.text, PROPER_NOUNS), [], `${locale} ${JSON.stringify(fields)}`);
      }
    }
  });

  test('times on the security page are in the member\'s zone with its offset', async () => {
    const { visitor } = await member();
    const signedInAt = /<td role="cell" data-label="Signed in">[^<]*<span class="when">\(<time datetime="([^"]+)">([^<]+)<\/time>/;
    await visitor.post('/settings/profile', { time_zone: 'Asia/Taipei' });
    assert.deepEqual(signedInAt.exec((await visitor.get('/settings/security')).text)?.slice(1), ['2026-11-22T00:30:48Z', '2026-11-22 08:30 UTC+8']);
    await visitor.post('/settings/profile', { time_zone: 'Europe/London' });
    assert.deepEqual(signedInAt.exec((await visitor.get('/settings/security')).text)?.slice(1), ['2026-11-22T00:30:48Z', '2026-11-22 00:30 UTC'], 'London keeps UTC in November');
    await visitor.post('/settings/profile', { time_zone: '' });
    assert.equal(signedInAt.exec((await visitor.get('/settings/security')).text)?.[2], '2026-11-22 08:30 UTC+8', 'the site\'s zone, Asia/Shanghai');
  });

  test('a recent time shows its full time with the offset, the relative words beside it, in the page\'s language', async () => {
    const { visitor } = await member();
    const cell = /<td role="cell" data-label="(?:Signed in|登录时间|登入時間)">([^]*?)<\/td>/;
    const english = cell.exec((await visitor.get('/settings/security')).text)?.[1];
    assert.match(english ?? '', /^\w[^<]* <span class="when">\(<time datetime="2026-11-22T00:30:48Z">2026-11-22 08:30 UTC\+8<\/time>\)<\/span>$/);
    await visitor.post('/settings/profile', { language: 'zh-CN' });
    const chinese = cell.exec((await visitor.get('/settings/security')).text)?.[1];
    assert.match(chinese ?? '', /^[^<\w]+<span class="when">（<time datetime="2026-11-22T00:30:48Z">2026-11-22 08:30 UTC\+8<\/time>）<\/span>$/);
  });

  /** A member with something on every settings page: a token, an authorized app, an app of their own, two-step on. */
  async function busyMember(): Promise<{ user: User; visitor: Visitor; clientId: string; tokenId: number; secret: string }> {
    const { user, visitor } = await member();
    const { record } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'backup', scopes: ['profile:read'], expiresInDays: 30 });
    const { client } = await registerClient(t.deps.stores, t.clock, {
      name: 'Demo App', description: '', homepageUrl: '', redirectUris: ['https://app.example/cb'], type: 'confidential', ownerId: user.id,
    });
    const enrolment = await beginTotpEnrolment(t.deps, user);
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, t.clock.now()));
    return { user, visitor, clientId: client.clientId, tokenId: record.id, secret: enrolment!.secret };
  }

  test('after a recovery code is used, the security page says how many are left, as a plural in each language', async () => {
    const { user } = await member();
    const enrolment = await beginTotpEnrolment(t.deps, user);
    const codes = await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, t.clock.now()));
    const browser = new Visitor(t.baseUrl);
    assert.equal((await browser.post('/login', { username: user.username, password: PASSWORD, return_to: '/' })).location, '/login/second-step');
    assert.equal((await browser.post('/login/second-step', { code: codes[0]! })).status, 303);
    const left = (lang: string) => browser.request('/settings/security', { headers: { 'accept-language': lang } }).then((page) => /<span class="recovery-left">([^<]*)<\/span>/.exec(page.text)?.[1]);
    assert.equal(await left('en'), '9 recovery codes left.');
    assert.equal(await left('zh-CN'), '还剩 9 个恢复码。');
    assert.equal(await left('zh-TW'), '還剩 9 組復原碼。');
  });

  test('the tokens table calls a token\'s end its expiry time, and the form\'s choice its validity, in each language', async () => {
    const { visitor } = await busyMember();
    const expectations = { 'zh-CN': ['到期时间', '有效期'], 'zh-TW': ['到期時間', '有效期限'], en: ['Expires', 'Expires'] } as const;
    for (const [locale, [column, field]] of Object.entries(expectations)) {
      visitor.cookies.set('lang', locale);
      const page = (await visitor.get('/settings/tokens')).text;
      assert.match(page, new RegExp(`<th role="columnheader" scope="col">${column}</th>`), `${locale}: the column of end dates`);
      assert.match(page, new RegExp(`<label for="[^"]*">${field}</label>`), `${locale}: the form's choice`);
    }
  });

  test('every settings page in Chinese has no English sentence, and its heading is the translated one', async () => {
    const { user, visitor, clientId, tokenId, secret } = await busyMember();
    const pages: Array<[string, Record<string, string>]> = [
      ['/settings/profile', { 'zh-CN': '个人资料', 'zh-TW': '個人資料' }],
      ['/settings/tokens', { 'zh-CN': 'API 令牌', 'zh-TW': 'API 權杖' }],
      ['/settings/applications', { 'zh-CN': '已授权的应用', 'zh-TW': '已授權的應用程式' }],
      ['/settings/developers', { 'zh-CN': '开发者应用', 'zh-TW': '開發者應用程式' }],
      [`/settings/developers/${clientId}`, { 'zh-CN': 'Demo App', 'zh-TW': 'Demo App' }],
      ['/settings/security', { 'zh-CN': '安全', 'zh-TW': '安全性' }],
    ];
    for (const locale of ['zh-CN', 'zh-TW'] as const) {
      visitor.cookies.set('lang', locale);
      for (const [path, headings] of pages) {
        const page = await visitor.get(path);
        assert.equal(page.status, 200, path);
        assert.equal(h1(page.text), headings[locale], `${locale} ${path}`);
        assert.deepEqual(englishSentences(page.text, PROPER_NOUNS), [], `${locale} ${path}`);
      }
      for (const [path, fields] of [
        ['/settings/account/delete', {}],
        ['/settings/tokens/revoke', { token_id: String(tokenId) }],
        [`/settings/developers/${clientId}/rotate-secret`, {}],
        [`/settings/developers/${clientId}/deactivate`, {}],
      ] as const) {
        const asked = await visitor.post(path, fields);
        assert.equal(asked.status, 200, path);
        assert.deepEqual(englishSentences(asked.text, PROPER_NOUNS), [], `${locale} ${path}`);
      }
      const noPassword = await visitor.post('/settings/account/data', {});
      assert.equal(noPassword.status, 400);
      assert.deepEqual(englishSentences(noPassword.text, PROPER_NOUNS), [], `${locale} data download refused`);
      const refused = await visitor.post('/settings/developers', { name: '', redirect_uris: 'http://evil.example/cb#x', type: 'other' });
      assert.equal(refused.status, 400);
      assert.deepEqual(englishSentences(refused.text, [...PROPER_NOUNS, /evil\.example/]), [], `${locale} registration problems`);
      const detailsRefused = await visitor.post(`/settings/developers/${clientId}/details`, { name: '', description: '', homepage: 'javascript:alert(1)' });
      assert.equal(detailsRefused.status, 400);
      assert.deepEqual(englishSentences(detailsRefused.text, [...PROPER_NOUNS, /javascript:alert\(1\)/]), [], `${locale} app details problems`);

      t.clock.advance(30_000);
      const codes = await visitor.post('/settings/security', { action: 'recovery-codes', code: totpCode(secret, t.clock.now()) });
      assert.equal(codes.status, 200);
      assert.match(codes.text, /href="data:text\/plain;charset=utf-8,[^"]+" download="recovery-codes.txt"/, 'the codes can be downloaded');
      assert.deepEqual(englishSentences(codes.text, PROPER_NOUNS), [], `${locale} recovery codes`);

      const second = new Visitor(t.baseUrl);
      second.cookies.set('lang', locale);
      await second.post('/login', { username: user.username, password: PASSWORD, return_to: '/' });
      const step = await second.get('/login/second-step');
      assert.equal(step.status, 200);
      assert.equal(h1(step.text), locale === 'zh-CN' ? '两步验证' : '兩步驟驗證');
      assert.deepEqual(englishSentences(step.text, PROPER_NOUNS), [], `${locale} second step`);
    }
  });
});
