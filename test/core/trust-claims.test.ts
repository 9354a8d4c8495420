/**
 * What in an app's name claims the site's trust, which an app nobody at the site answers for may
 * not be named with (`trustClaimCheck`, `unreviewedNameRule`): plain logic, no server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { trustClaimCheck } from '../../src/core/text.js';
import { blocksExecuted, startCountingWork, stopCountingWork } from '../support/work-count.js';

const trustClaims = await trustClaimCheck();

const SITE_NAMES = ['Community', '社区', '社群'];

before(startCountingWork);
after(stopCountingWork);

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

test('the site\'s own name as the name, or leading it before a word of its service, is a claim in any of its languages and however spelt; in an ordinary phrase or a longer word it is not', () => {
  for (const name of ['Community', 'Community Account Security', 'community login', 'C.o.m.m.u.n.i.t.y', 'Commun1ty', 'ᴄᴏᴍᴍᴜɴɪᴛʏ', 'ꓚꓳꓟꓟꓴꓠꓲꓔꓬ', '社区', '社区安全中心', '社群 App', '社區 App', '社 區帳號'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Open Source Community Tools', 'MyCommunity', '读书社区', '读书 社区 App', '社交媒體'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a site name in an alphabet leads a name only as a whole word: ended by the name\'s end, a gap, a digit, Han or a capital, not by letters that go on', () => {
  for (const name of ['Community Account Security', 'Community-hub', 'Community.hub', 'Community: Sign in', 'Community2', 'Community365', 'Community0', 'Community1 Login', 'CommunityHub', 'Community社区工具', 'Ｃｏｍｍｕｎｉｔｙ Login'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Communityhub', 'COMMUNITYHUB', 'Communities', 'Communitywide Notes', 'Communityhub 2'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a Chinese site name leads a name alone or before a word of the site\'s own service or authority, never as the start of an ordinary compound', () => {
  for (const name of ['社区', '社区官方', '社区账号', '社區帳號', '社区帐户', '社区安全', '社区中心', '社区团队', '社区客服', '社区管理', '社区登录', '社区认证', '社区支持', '社群支援', '社区 帮助', '社区App', '社区 2.0', '社群'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('site_name'), name);
  for (const name of ['社区团购助手', '社区团购', '社區醫院', '社区医院挂号', '社群媒體管理', '社群經營', '社区助手', '社区 团购', '社群小帮手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('"official" in French, Spanish, Portuguese, German, Italian and Dutch, and Trusted and Approved, are words of review as whole words', () => {
  for (const name of ['Agent Officiel', 'Application officielle', 'App Oficial', 'Offiziell Agent', 'Die offizielle App', 'App Ufficiale', 'Officieel Agent', 'Trusted Agent', 'TrustedAgent', 'Approved Helper', 'ＴＲＵＳＴＥＤ', 'Appr0ved'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['review_word'], name);
  for (const name of ['Trust Score', 'Untrusted Links Checker', 'Approve Queue', 'Officina', 'Oficina Helper', 'Distrusted'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('Japanese 公認 is a word of review anywhere; 公式, 認定 and 正規 only in a name written in Japanese (holding kana), as Chinese uses them for formula, determination and regular', () => {
  for (const name of ['公認アプリ', '公认助手', '公式アプリ', '公式 ツール', '認定ツール', 'ｺﾐｭﾆﾃｨ公式', '正規版アプリ'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['review_word'], name);
  for (const name of ['公式编辑器', '数学公式计算器', '資格認定助手', '学分认定查询', '正规化工具', '正規表達式測試'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('"Community ✔ 已认证 Verified" makes every claim at once; "✔ 已认证 Verified by Community" all but the site\'s name', () => {
  assert.deepEqual(trustClaims('Community ✔ 已认证 Verified', SITE_NAMES), ['check_mark', 'review_word', 'site_name']);
  assert.deepEqual(trustClaims('✔ 已认证 Verified by Community', SITE_NAMES), ['check_mark', 'review_word']);
});

test('a letter drawn as punctuation (a Lisu dot, a modifier apostrophe) parts the site\'s name as the punctuation it imitates: "Communityꓸhub" and "ꓸCommunity Security" are refused as "Community.hub" is', () => {
  for (const name of ['Communityꓸhub', 'Community\u02bbs Security', 'Community\u02c8s Login', 'Community\ua4f9Login', '\ua4f8Community Security', '\u02bbCommunity Account', '\ua4f8社区账号'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('site_name'), name);
  for (const name of ['Verifiedꓸapp', 'ꓸOfficial Tools'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('review_word'), name);
  for (const name of ['Communityhub', 'Hawai\u02bbi Community Guide'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a site name or word of review written in capitals ends where the capitals do: "COMMUNITYhub" and "COMMUNITYSecurity" are refused as "CommunityHub" is; "COMMUNITYHUB" is one word', () => {
  for (const name of ['COMMUNITYhub', 'COMMUNITYSecurity', 'COMMUNITYLogin 2'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('site_name'), name);
  for (const name of ['VERIFIEDapp', 'myOFFICIALtools', 'OFFICIALTools'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('review_word'), name);
  for (const name of ['COMMUNITYHUB', 'Communityhub', 'COMMUNITIES', 'Communities'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a Chinese site name before sign-in as it is often misspelt (登陆), authorization, sign-up, the client, the back office, site affairs, an official account, or moderators, or with 的 between, is a claim', () => {
  for (const name of ['社区登陆', '社區登陸', '社区授权', '社区注册', '社区客户端', '社区后台', '社区站务', '社区官号', '社区官博', '社群官微', '社区版主', '社区的账号', '社區的帳號', '社区的安全中心'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('site_name'), name);
  for (const name of ['社区的故事', '社区团购助手', '社区登山队', '社区公园', '社区公告板'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a Han site name before katakana (a loanword: アカウント, アプリ) or a numeral 〇 leads a name as before a Latin word or a digit; an operator\'s Han name before 社区 or 社群 presents the site as it names itself', () => {
  for (const name of ['社区アカウント', '社區アプリ', '社区ログイン', '社区〇号'])
    assert.ok(trustClaims(name, SITE_NAMES).includes('site_name'), name);
  for (const name of ['河畔社区', '河畔社群', '河畔社區 App', '河畔'])
    assert.ok(trustClaims(name, ['Riverside', '河畔']).includes('site_name'), name);
  for (const name of ['社区团购助手', '河畔跑步', '读书社区'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔', ...SITE_NAMES]), [], name);
});

test('a site name with a tagline after a comma, a parenthesis or a dash leads a name by its first part too: "Riverside, Est. 2009" is called Riverside', () => {
  const sites = ['Riverside, Est. 2009', '河畔（始于2009）', 'Lakeside - a place to talk', 'Hilltop (Beta)'];
  for (const name of ['Riverside Account Security', 'Riverside', 'RiversideLogin', '河畔账号', 'Lakeside Login', 'Hilltop Support', 'Riverside, Est. 2009 Login'])
    assert.ok(trustClaims(name, sites).includes('site_name'), name);
  for (const name of ['Riversides', 'Lakesider Notes', 'My Riverside Guide', '河畔跑步'])
    assert.deepEqual(trustClaims(name, sites), [], name);
});

test('a site name in an alphabet with an ordinary word after it is an app for a community, not the site: "Community Garden Planner", "Community Radio", "Community Service Tracker" register', () => {
  for (const name of ['Community Garden Planner', 'Community Radio', 'community tools', 'Garden Community Tools', 'Garden Community', 'Community Service Tracker', 'Community Center Bookings', 'Community Events 2', 'Community 2 Garden'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a site name in an alphabet anywhere in the name is the site\'s own before a word of access to its accounts, whatever follows, or words of its service that end the name, or alone after claims: "Your Community Account", "Community Support", "Sign in to Community"', () => {
  for (const name of ['Community Account', 'Community Account Recovery', 'Your Community Account', 'Secure Community Login Helper', 'Community\'s Password Reset', 'Community App', 'Community Support',
    'Community Help Center', 'Community Support Team', 'Garden Community Helpdesk', 'Community Pro', 'Community Rewards Program', 'Sign in to Community', 'Log in with Community', 'Support Community', '365 Community'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
});

test('a site name of several words is the site\'s own however its words are spaced, by the same rule: "River Side Support" and "RiverSide Login" are refused, "River Side Walks" registers', () => {
  for (const name of ['River Side', 'River Side Support', 'RiverSide Login', 'Riverside Account'])
    assert.deepEqual(trustClaims(name, ['River Side']), ['site_name'], name);
  for (const name of ['River Side Walks', 'Walks by the River Side', 'Riversides'])
    assert.deepEqual(trustClaims(name, ['River Side']), [], name);
});

test('a Chinese word of the site\'s service claims only as what the name names, at its end: 社区服务站, 社区中心预约, 社区支持者 and 社区福利院 register, 社区服务, 社区服务中心 and 社区福利 do not', () => {
  for (const name of ['社区服务站', '社区中心预约', '社区支持者', '社区福利院', '社区团队建设', '社区管理助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
  for (const name of ['社区服务', '社区中心', '社区服务中心', '社区安全中心 App', '社区支持', '社区福利'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
});

test('a Chinese word of access to the site\'s accounts or of what a phishing page hands out claims whatever follows it: 社区红包, 社区会员中心, 社区账号找回', () => {
  for (const name of ['社区红包', '社区红包助手', '社區會員中心', '社区账号找回', '社区登录助手', '社区验证码'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
});

test('a number before a Han site name does not make it another\'s: "1社区账号" and "１社區帳號" are refused as "社区账号" is', () => {
  for (const name of ['1社区账号', '１社區帳號', '2024社区', '12 社区 App'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['1社区团购', '1号读书社区'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('hiragana or Hangul after a Han site name, a word in Japanese or Korean, ends it as katakana or a Latin word does: "社区のお知らせ" and "社区계정" are refused', () => {
  for (const name of ['社区のお知らせ', '社區のアカウント', '社区계정', '社群 로그인'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
});

test('a site name with a tagline after a middle dot or an ideographic full stop leads a name by its first part: "河畔・讨论区" and "河畔。始于2009" are called 河畔; a Latin full stop is no tagline', () => {
  const sites = ['河畔・讨论区', '湖边。始于2009', 'Lakeside ‧ Talk', 'St. Mary\'s'];
  for (const name of ['河畔账号', '河畔', '湖边客服', 'Lakeside Login'])
    assert.ok(trustClaims(name, sites).includes('site_name'), name);
  for (const name of ['St Support', 'St Login'])
    assert.deepEqual(trustClaims(name, sites), [], name);
});

test('a name costs work in proportion to its length: words read two ways ("LogIn" as login and as log in, "HelpDesk") are read once a place, before the site\'s name and after it, and a long run of service words ends no stack; a misspelt site name, Chinese after one in an alphabet, words of what the site holds and a run of digits cost work in proportion too', () => {
  // Read every way, 17 "㏒In1" (NFKC: logIn1) within the 80 characters of a name held the server 8 s.
  const shapes = [
    (n: number) => `${'LogIn '.repeat(n)}x Community`,
    (n: number) => `${'\u33d2In1'.repeat(n)}x Community`,
    (n: number) => `Community ${'HelpDesk '.repeat(n)}x`,
  ];
  // Each reading added since: a misspelt site name at every place, Chinese after one in an
  // alphabet, a word of what the site holds, and a run of digits after its name.
  const newReadings = [
    (n: number) => `${'Comunity Garden '.repeat(n)}x`,
    (n: number) => `${'My Community团购 '.repeat(n)}x`,
    (n: number) => `Community ${'Account Exporter '.repeat(n)}x`,
    (n: number) => `Community ${'1'.repeat(100 * n)} x`,
    (n: number) => `Community ${'Suspended Exporter '.repeat(n)}x`,
    (n: number) => `${'Sign in to '.repeat(n)}社区团购`,
  ];
  for (const shape of [...shapes, ...newReadings]) {
    trustClaims(shape(4), SITE_NAMES); // compiled and warm: the first call's one-off work is not the name's
    const short = blocksExecuted(() => trustClaims(shape(4), SITE_NAMES));
    const long = blocksExecuted(() => assert.deepEqual(trustClaims(shape(16), SITE_NAMES), []));
    const lengths = shape(16).length / shape(4).length;
    assert.ok(long <= 2 * lengths * short, `${shape(1)}: ${short} blocks for 4, ${long} for 16 (${(long / short).toFixed(1)} times)`);
  }
  assert.deepEqual(trustClaims(`社区${'服务'.repeat(20_000)}`, SITE_NAMES), ['site_name']);
});

test('the claim words are folded once, not on each name checked: every registration shares one checker', async () => {
  // Folding the 200 words again took 5 ms, twice on each RFC 7591 registration, more than its name.
  assert.equal(await trustClaimCheck(), trustClaims);
});

test('the words beside the site\'s name are tried at a place of a name only where one of them may begin: 80 characters that NFKC writes as 1,270 (ﷺ, 18 letters each) cost little more with the site\'s name before them than without', () => {
  // Every claim word tried at each of the 1,270 places held the server a tenth of a second.
  for (const tail of ['\ufdfa'.repeat(70), 'x'.repeat(70)]) {
    const named = `Community ${tail}`;
    const unnamed = `Xommunity ${tail}`;
    trustClaims(named, SITE_NAMES); // compiled and warm
    const withName = blocksExecuted(() => assert.deepEqual(trustClaims(named, SITE_NAMES), []));
    const without = blocksExecuted(() => assert.deepEqual(trustClaims(unnamed, SITE_NAMES), []));
    assert.ok(withName <= 3 * without, `${named.slice(0, 12)}: ${withName} blocks with the site's name, ${without} without`);
  }
});

test('a word of the site\'s accounts or service claims in the plural as it does in the singular: "Community Logins", "Community Sign-Ins", "Community IDs", "Community Teams"', () => {
  for (const name of ['Community Logins', 'Community Log-Ins', 'Community Sign-Ins', 'Community Signins', 'Community IDs', 'Community Teams', 'River Side Logins'])
    assert.deepEqual(trustClaims(name, [...SITE_NAMES, 'River Side']), ['site_name'], name);
});

test('beside the site\'s name in an alphabet, two-factor sign-in, one-time codes and passkeys claim its accounts whatever follows; recovery, resets, identity, authorization and consent, moderation, members, trust and safety, help lines, support chat, appeals, checks, codes, status, updates and upgrades, developers and owners, points and prizes claim its service as the name\'s last words', () => {
  for (const name of ['Community 2FA', 'Community MFA Helper', 'Community Two-Factor', 'Community 2-Step Verification', 'Community OTP', 'Community TOTP Codes', 'Community Passkey', 'Community Refund Desk',
    'Community Recovery', 'Community Reset', 'Community Identity', 'Community Connect', 'Community Moderation', 'Community Mod Team', 'Community Member Login', 'Community Trust & Safety',
    'Community Trust and Safety', 'Community Hotline', 'Community Customer Care', 'Community Appeals', 'Community Abuse Team', 'Community Security Check', 'Community Security Update', 'Community Key',
    'Community Points', 'Community Coins', 'Community Cash', 'Community Airdrop', 'Community Prize', 'Community Lottery', 'Community Subscription', 'Community Authorize', 'Community Consent',
    'Community Permissions', 'Community Access', 'Community Security Code', 'Community Single Sign-On', 'Community Live Chat', 'Community Support Chat', 'Community Identity Provider',
    'Community Developer Portal', 'Community Dev Team', 'Community Status', 'Community Pro Upgrade', 'Community Renewal', 'Community Announcements', 'Community Feedback', 'Community Owner', 'Community Founder'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Community Identity Workshop', 'Community Recovery Network', 'Community Moderation Tools', 'Community Member Directory', 'Community Points Tracker', 'Community Connect Events',
    'Community Trust Fund Tracker', 'Community Check-in', 'Community Access Map', 'Community Code of Conduct', 'Community Consent Forms Library', 'Community Chat', 'Community Developer Tools', 'Community Status Board Widget'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('the site\'s name in an alphabet with an edition ("for iOS", "Lite", "Beta"), a company\'s or a mark\'s word ("Inc", "HQ", "™") or what a site calls itself ("Riverside Community", "Community Forum") is the site\'s own', () => {
  for (const name of ['Community for iOS', 'Community for Android', 'Community Windows', 'Community Lite', 'Community Beta', 'Community on the Web', 'Community Inc', 'Community, Inc.', 'Community Ltd', 'Community HQ',
    'Community™', 'Community ™', 'Community™ Login', 'Community ℠', 'Community Forum', 'Community Website', 'Community Platform'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Riverside Community', 'Riverside Community Account', 'Riverside Forums', 'River Side Community Support'])
    assert.deepEqual(trustClaims(name, ['Riverside', 'River Side']), ['site_name'], name);
  for (const name of ['Community for Gardeners', 'Community Forum Reader', 'Riverside Community Garden', 'Community Beta Testers Club'])
    assert.deepEqual(trustClaims(name, ['Riverside', ...SITE_NAMES]), [], name);
});

test('the site\'s name in an alphabet after nothing but "the", "your", "into", "for", "at", "on", a welcome and claims is the site alone: "Sign in to the Community", "Login for Community", "The Community"', () => {
  for (const name of ['Sign in to the Community', 'Sign in to your Community', 'Login into Community', 'Login for Community', 'Login at Community', 'Login on Community', 'The Community', 'Your Community', 'Welcome to Community'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Join the Community', 'Tools for the Community', 'Garden at Community Hall'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a Chinese site name before recovering, resetting or changing a password, online or live customer service, one-tap or QR sign-in, identity checks, top-ups, withdrawals, refunds or a lottery, or the site\'s staff, claims its accounts: 社区找回密码, 社区在线客服, 社区扫码登录, 社区充值', () => {
  for (const name of ['社区找回密码', '社区找回账号', '社区重置密码', '社区修改密码', '社区在线客服', '社区人工客服', '社区扫码登录', '社区一键登录', '社区快捷登录', '社区统一登录', '社区单点登录', '社区身份验证', '社区实名',
    '社区充值', '社区提现', '社区退款', '社区抽奖', '社区工作人员', '社区站长', '社区小编', '社區線上客服'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
});

test('a Chinese site name before a hotline, notices, system messages, a security check, operations, an edition (手机版, 网页版), a mini program, a mall, points, coins, rewards, appeals, reports, feedback, a company or headquarters, or what a site calls itself (论坛, 网站, 平台) claims its service as the name\'s end', () => {
  for (const name of ['社区热线', '社区客服热线', '社区服务热线', '社区公告', '社区消息', '社区系统消息', '社区安全检测', '社区运营团队', '社区管理组', '社区手机版', '社区网页版', '社区小程序', '社区商城', '社区积分', '社区金币',
    '社区奖励', '社区申诉中心', '社区举报', '社区意见反馈', '社区总部', '社区有限公司', '社区集团', '社区论坛', '社区网', '社区网站', '社区平台'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['河畔论坛', '河畔论坛账号', '河畔網站', '河畔网'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), ['site_name'], name);
  for (const name of ['社区消息推送助手', '社区公告板', '社区网格员', '社区网球俱乐部', '社区平台插件', '社区论坛阅读器', '社区积分排行榜', '社区安全巡逻排班', '社区组织', '社区修改器', '河畔网球'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔', ...SITE_NAMES]), [], name);
});

test('a Chinese site name after signing in or up to it, or a welcome, is the site\'s own as it would be alone: "登录河畔", "欢迎登录河畔", "请登录社区"', () => {
  for (const name of ['登录河畔', '登录 河畔', '欢迎登录河畔', '请登录河畔', '登入河畔社区', '注册河畔账号', '欢迎来到河畔'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), ['site_name'], name);
  for (const name of ['读书社区', '会员社区', '登录社区的小工具', '欢迎社区团购'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('an app\'s name, like the site\'s, gives way to a tagline at a comma, bracket, bar, middle dot or spaced dash: "Community Support (EU)" and "社区安全中心（北京）" are the site\'s own service, as "Community Support" and "社区安全中心" are', () => {
  for (const name of ['Community Support (EU)', 'Community Support — unofficial', 'Community Help Center, Europe', 'Community Security Team | Alerts', 'Community · Since 2009', 'Community (unofficial)', '社区安全中心（北京）', '社区服务·北京', '河畔社区｜2024'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔', ...SITE_NAMES]), ['site_name'], name);
  for (const name of ['Community Garden Planner (Beta)', 'Garden Planner (Community)', 'Community Radio — live', 'Community-minded Tools', '社区团购（北京）', '社区服务站（北京）'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('Taiwan\'s words for forgetting, resetting or changing a password, messages, top-ups, hotlines, points, apps, editions and the webmaster claim as the mainland\'s do: 社群忘記密碼, 社群系統訊息, 社群儲值, 社群應用程式', () => {
  for (const name of ['社群忘記密碼', '社区忘记密码', '社群重設密碼', '社群變更密碼', '社群系統訊息', '社群儲值', '社群儲值中心', '社群客服專線', '社群點數', '社群應用程式', '社区应用', '社群網管', '社群行動版', '社群桌面版'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['社群應用程式開發教學', '社区应用商店', '社群點數排行榜'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a word of what the site holds for its members or of those who run it (an account, an ID, admins, staff, moderators; 账号, 管理员, 版主, 后台) claims as the name\'s last words or before a word of access or of its service, not before an ordinary word: "Community Account Exporter" and "社区账号导出工具" register, "Community Account Login" and "社區帳號安全" do not', () => {
  for (const name of ['Community Account', 'Community Account Login', 'Community Account Security', 'Community Account Security Checker', 'Community Admin Panel', 'Community Admins', 'Community Staff Team',
    'Community Moderator Login Helper', 'Community ID Check', 'Community Account for iOS', '社区账号', '社区账号登录', '社區帳號安全', '社區帳號安全中心', '社群帳號登入助手', '社区管理员', '社区管理员中心',
    '社群版主後台', '社区后台管理'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Community Account Exporter', 'Community Admin Tools', 'Community Staff Picks', 'Community Moderator Toolkit', 'Community ID Card Maker', 'Community Account for Gardeners',
    '社区账号导出工具', '社区管理员工具', '社群版主小幫手', '社區帳號匯出工具', '社区后台助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
  for (const name of ['Riverside Account Security', 'Riverside Admin', '河畔账号安全', '河畔帳號登入'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), ['site_name'], name);
  for (const name of ['Riverside Admin Tools', '河畔管理员工具'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), [], name);
});

test('a word of what befalls what the site holds (suspended, locked, unlock, confirmation, settings; 冻结, 异常, 封禁, 解封, 激活) claims after a word of what it holds as a word of its service does, not alone: "Community Account Suspended", "Community Account Locked" and "社区账号异常" are refused, "Community Protection Fund" registers', () => {
  for (const name of ['Community Account Suspended', 'Community Account Suspension Notice Helper', 'Community Account Locked', 'Community Account Unlock', 'Community Account Confirmation', 'Community Account Protection',
    'Community Account Settings', 'Community Account Manager', 'Community Account Review', 'Community Account Warning', 'Community Account Reactivation', 'Community Admin Warning', 'Your Community ID Blocked',
    '社区账号冻结', '社区账号异常', '社区账号封禁', '社区账号解封', '社區帳號凍結通知', '社区账号激活', '社区账号设置', '社群帳號設定', '社区账户锁定', '社区管理员警告', '社群帳號停權', '社群帳號封鎖'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Riverside Account Suspended', '河畔账号异常'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), ['site_name'], name);
  for (const name of ['Community Protection Fund', 'Community Review Board', 'Community Settings Sync', 'Review Community', 'Community Manager Toolkit', 'Community Account Exporter', '社区保护伞', '社区设置助手'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('English words that lead a site name in an alphabet to the site\'s own lead a Chinese one too, but a word of its service does not: "Your 社区账号", "Sign in to 社区" and "Welcome to 社群" are refused as "Your Community Account" is, "Linux社区" and "Python 社区助手" register', () => {
  for (const name of ['Your 社区账号', 'Your社区账号', 'Sign in to 社区', 'Welcome to 社群', 'Login 社区', 'The 社区', 'Log into 社區帳號', 'Your 2 社区'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  assert.deepEqual(trustClaims('Sign in to 河畔', ['Riverside', '河畔']), ['site_name']);
  for (const name of ['Linux社区', 'Python 社区助手', 'Android社区', 'Your 社区团购', 'Garden 社区账号', 'Sign in to 读书社区'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('"please" before signing in to the site is a welcome as 请 is: "Please sign in to Community" and "Please log into Community" are refused as "请登录社区" is, "Please Help the Community Garden" registers', () => {
  for (const name of ['Please sign in to Community', 'Please log into Community', 'Please Login Community', '请登录社区'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  assert.deepEqual(trustClaims('Please sign in to Riverside', ['Riverside', '河畔']), ['site_name']);
  for (const name of ['Please Help the Community Garden', 'Pleasant Community'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a possessive after a word of what the site holds or of who runs it (\'s, 的) stands between it and a claim as a gap does: "Community Account\'s Login", "Community ID\'s Password" and "社区账号的登录" are refused as "Community Account Login" is, "Community Admin\'s Toolkit" registers', () => {
  for (const name of ['Community Account\'s Login', 'Community Admin\'s Login', 'Community ID\'s Password', 'Community Staff\'s Refund Desk', 'Community Account\'s Security', 'Community Account\'s',
    '社区账号的登录', '社区管理员的后台', '社區帳號的安全中心'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  assert.deepEqual(trustClaims('Riverside Account\'s Login', ['Riverside', '河畔']), ['site_name']);
  assert.deepEqual(trustClaims('河畔账号的登录', ['Riverside', '河畔']), ['site_name']);
  for (const name of ['Community Admin\'s Toolkit', 'Community Account\'s Exporter', '社区管理员的工具', '社区账号的导出工具'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a site name in an alphabet before Chinese that makes a Chinese site name the site\'s own is the site\'s own whatever comes before it: "My Community账号" and "Garden Community帳號安全" are refused, "My Community团购" registers', () => {
  for (const name of ['My Community账号', 'Garden Community帳號安全', 'My Community的账号', 'My Community 客服中心', 'Hello Community登录助手', 'My Comunity账号'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  assert.deepEqual(trustClaims('My Riverside帳號', ['Riverside', '河畔']), ['site_name']);
  for (const name of ['My Community团购', 'Garden Community账号导出工具', 'My Community 读书会'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('signing into or onto the site is signing in to it, in English and in Chinese: "Sign into Community", "Log onto the Community" and "登录到社区" are refused as "Sign in to Community" is', () => {
  for (const name of ['Sign into Community', 'Log into Community', 'Sign onto the Community', 'Login onto Community', 'SIGN INTO COMMUNITY', '登录到社区', '登入到社群', '歡迎登錄到社區'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Sign into Riverside', '登录到河畔'])
    assert.deepEqual(trustClaims(name, ['Riverside', '河畔']), ['site_name'], name);
  for (const name of ['Tune into Community Radio', 'Sign into Community Gardening', '到社区服务站'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
});

test('a site name in an alphabet of eight letters or more is read with one slip of typing inside it (a letter left out, added, mistyped, or two swapped), its first and last letters as written: "Comunity" and "Commuinty Support" are refused, "Comunity Garden Planner" and "Communitys" register; a shorter name is read as written', () => {
  for (const name of ['Comunity', 'Commmunity Login', 'Commumity Account', 'Commuinty Support', 'Communtiy', 'Cornunity', 'COMUNITY LOGIN', 'Your Comunity Account'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), ['site_name'], name);
  for (const name of ['Comunity Garden Planner', 'Xommunity', 'Communitx', 'Communitys', 'Comunityhub', 'Commodity Login'])
    assert.deepEqual(trustClaims(name, SITE_NAMES), [], name);
  for (const name of ['Rivreside Login', 'Riversde', 'Lakesde Support'])
    assert.deepEqual(trustClaims(name, ['Riverside', 'Lakeside']), ['site_name'], name);
  for (const name of ['Riversides', 'Lakesider Notes', 'Hiltop Login', 'Hillop'])
    assert.deepEqual(trustClaims(name, ['Riverside', 'Lakeside', 'Hilltop']), [], name);
  assert.deepEqual(trustClaims('Hilltop Login', ['Hilltop']), ['site_name']);
});
