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
  for (const name of ['✓ Agent', 'Agent ✔', '☑Agent', 'Agent ✅', '\u{1f5f8} Agent', '\u{1f5f9} Agent', '√ Agent', 'Agent \u{10102}', '🆗 Agent', '㊣ Agent'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['check_mark'], name);
});

test('a word of review is a claim in any case, width, spacing or look-alike letters, an English one as a whole word, a Chinese one anywhere and in either script', () => {
  for (const name of ['Verified Agent', 'VERIFIED agent', 'ＶＥＲＩＦＩＥＤ Agent', 'V e r i f i e d', 'Ver\u0456fied Agent', 'VERlFlED Agent', 'Ver1fied', 'Offlcial', 'ᴠᴇʀɪꜰɪᴇᴅ', 'ꓦꓰꓣꓲꓝꓲꓰꓓ', 'OfficialAgent', 'Agent (Official)', 'Officially Agent', 'Certified Helper',
    '官方助手', '官 方助手', '官網助手', '认证应用', '小幫手已認證', '已验证', '已驗證的應用'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['review_word'], name);
  for (const name of ['Unofficial Agent', 'Verify My Email', 'Certify', 'Officer Tools', 'Demo App', '读书App', '验证码助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('the site\'s own name leading the name is a claim, in any of its languages and however spelt; later in the name it is not', () => {
  for (const name of ['Community', 'Community Account Security', 'community tools', 'C.o.m.m.u.n.i.t.y', 'Communityhub', 'Commun1ty', 'ᴄᴏᴍᴍᴜɴɪᴛʏ', 'ꓚꓳꓟꓟꓴꓠꓲꓔꓬ', '社区', '社区安全中心', '社群 App', '社區 App', '社 區助手', '社区团购助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Open Source Community Tools', 'MyCommunity', '读书社区', '读书 社区 App', '社交媒體'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('"Community ✔ 已认证 Verified" makes every claim at once; "✔ 已认证 Verified by Community" all but the site\'s name', () => {
  assert.deepEqual(trustClaims('Community ✔ 已认证 Verified', SITE_NAMES), ['check_mark', 'review_word', 'site_name']);
  assert.deepEqual(trustClaims('✔ 已认证 Verified by Community', SITE_NAMES), ['check_mark', 'review_word']);
});
