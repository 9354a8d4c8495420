/**
 * What in an app's name claims the site's trust, which an app nobody at the site answers for may
 * not be named with (`trustClaimCheck`, `unreviewedNameRule`): plain logic, no server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trustClaimCheck } from '../../src/core/text.js';

const trustClaims = await trustClaimCheck();

const SITE_NAMES = ['Community', '社区', '社群'];

test('a check mark or checked box is a claim, wherever it stands', () => {
  for (const name of ['✓ Agent', 'Agent ✔', '☑Agent', 'Agent ✅', '\u{1f5f8} Agent', '\u{1f5f9} Agent', '√ Agent', 'Agent \u{10102}'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['check_mark'], name);
});

test('a word of review is a claim in any case, width, spacing or look-alike letters, an English one as a whole word, a Chinese one anywhere and in either script', () => {
  for (const name of ['Verified Agent', 'VERIFIED agent', 'ＶＥＲＩＦＩＥＤ Agent', 'V e r i f i e d', 'Ver\u0456fied Agent', 'OfficialAgent', 'Agent (Official)', 'Officially Agent', 'Certified Helper',
    '官方助手', '官 方助手', '官網助手', '认证应用', '小幫手已認證', '已验证', '已驗證的應用'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['review_word'], name);
  for (const name of ['Unofficial Agent', 'Verify My Email', 'Certify', 'Officer Tools', 'Demo App', '读书App', '验证码助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('the site\'s own name standing as a name is a claim; inside a longer word it is not', () => {
  for (const name of ['Community Account Security', 'community tools', 'C.o.m.m.u.n.i.t.y', '社區 App', '读书社区', '社群'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Communityhub', '社区团购助手', '社群媒體'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('"✔ 已认证 Verified by Community" makes every claim at once', () => {
  assert.deepEqual(trustClaims('✔ 已认证 Verified by Community', SITE_NAMES), ['check_mark', 'review_word', 'site_name']);
});
