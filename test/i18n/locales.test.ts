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
