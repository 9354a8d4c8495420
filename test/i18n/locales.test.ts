/** How a page's language is chosen (INTERFACE section 12), as plain rules. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseLocale, localeOfAcceptLanguage, localeOfTag, localeOfUiLocales } from '../../src/core/locales.js';

test('Chinese tags map by script first, then by region', () => {
  for (const tag of ['zh-TW', 'zh-HK', 'zh-MO', 'zh-Hant', 'zh-Hant-CN', 'ZH-tw']) assert.equal(localeOfTag(tag), 'zh-TW', tag);
  for (const tag of ['zh', 'zh-CN', 'zh-SG', 'zh-Hans', 'zh-Hans-TW', 'zh_CN']) assert.equal(localeOfTag(tag), 'zh-CN', tag);
  for (const tag of ['en', 'en-US', 'en-GB']) assert.equal(localeOfTag(tag), 'en', tag);
  for (const tag of ['ja', 'fr-FR', '', '*']) assert.equal(localeOfTag(tag), undefined, tag);
});

test('Cantonese reads Traditional unless its tag says Simplified; Mandarin reads as Chinese', () => {
  for (const tag of ['yue', 'zh-yue', 'yue-HK', 'zh-yue-HK']) assert.equal(localeOfTag(tag), 'zh-TW', tag);
  for (const tag of ['yue-Hans', 'zh-yue-Hans', 'yue-CN', 'cmn', 'zh-cmn', 'cmn-Hans-CN']) assert.equal(localeOfTag(tag), 'zh-CN', tag);
  for (const tag of ['cmn-Hant', 'cmn-TW']) assert.equal(localeOfTag(tag), 'zh-TW', tag);
});

test('extensions and private use say nothing of script or region: the subtags before the first singleton do', () => {
  for (const tag of ['zh-CN-x-tw', 'zh-x-hant', 'zh-CN-u-rg-twzzzz', 'zh-Hans-t-zh-hant']) assert.equal(localeOfTag(tag), 'zh-CN', tag);
  for (const tag of ['zh-TW-x-cn', 'zh-Hant-u-nu-hans']) assert.equal(localeOfTag(tag), 'zh-TW', tag);
});

test('ui_locales: the first supported tag of the list wins', () => {
  assert.equal(localeOfUiLocales('ja zh-TW en'), 'zh-TW');
  assert.equal(localeOfUiLocales('fr de'), undefined);
  assert.equal(localeOfUiLocales(''), undefined);
});

test('Accept-Language: the highest q-value wins, the first among equals, q=0 refuses', () => {
  assert.equal(localeOfAcceptLanguage('en;q=0.5, zh-CN;q=0.9'), 'zh-CN');
  assert.equal(localeOfAcceptLanguage('zh-HK, en'), 'zh-TW');
  assert.equal(localeOfAcceptLanguage('fr, en;q=0.1'), 'en');
  assert.equal(localeOfAcceptLanguage('zh;q=0, en;q=0.2'), 'en');
  assert.equal(localeOfAcceptLanguage('zh;q=abc'), undefined);
});

test('Accept-Language: a weight that is not an RFC 9110 qvalue passes its range over', () => {
  for (const weight of ['q=0x1', 'q=1e0', 'q=1.5', 'q=0.1234', 'q=.5', 'q=+1', 'q= 1', 'q=1.001', 'q =1', 'Q = 1', 'q', 'q =0']) {
    assert.equal(localeOfAcceptLanguage(`zh-CN;${weight}, en;q=0.5`), 'en', weight);
  }
  for (const weight of ['q=1', 'q=1.', 'q=1.000', 'q=0.9', 'q=0.001', 'Q=1']) {
    assert.equal(localeOfAcceptLanguage(`zh-CN;${weight}, en;q=0`), 'zh-CN', weight);
  }
  assert.equal(localeOfAcceptLanguage('de'), undefined);
});

test('the order: ui_locales, the saved language, the cookie, Accept-Language, English', () => {
  const all = { uiLocales: 'zh-TW', saved: 'zh-CN', cookie: 'en', acceptLanguage: 'zh-HK' } as const;
  assert.equal(chooseLocale(all), 'zh-TW');
  assert.equal(chooseLocale({ ...all, uiLocales: undefined }), 'zh-CN');
  assert.equal(chooseLocale({ ...all, uiLocales: 'ja', saved: null }), 'en');
  assert.equal(chooseLocale({ acceptLanguage: 'zh-HK', cookie: 'klingon' }), 'zh-TW');
  assert.equal(chooseLocale({}), 'en');
});

test('the untranslated-English check finds an English sentence and passes Chinese with proper nouns', async () => {
  const { englishSentences } = await import('./untranslated.js');
  assert.deepEqual(englishSentences('<p>登录以继续使用 <strong>Demo App</strong></p>'), []);
  assert.deepEqual(englishSentences('<p>请输入密码</p><p>Forgot your password?</p><code>curl -H x y</code>'), ['Forgot your password']);
  assert.deepEqual(englishSentences('<p>授权 Very Nice App 访问</p>', ['Very Nice App']), []);
  assert.deepEqual(englishSentences('<input placeholder="Your name here">'), ['Your name here']);
});
