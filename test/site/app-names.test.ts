/**
 * The names of apps nobody at the site answers for, over real HTTP on every database: one that
 * registered itself (RFC 7591) or that a member registered or renamed on the developer page may
 * not claim the site's trust (a check mark, a word of review, the site's own name), while the
 * operator's apps keep any name; and a name someone chose that could reorder the words around it
 * (right to left, or holding a direction control an older row may keep) is isolated wherever a
 * page sets it in a sentence.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registerClient } from '../../src/core/oauth/clients.js';
import { addressesIn } from '../support/addresses.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type TestClient, authorizeQuery, pkcePair, signedInBrowser } from '../oauth/helpers.js';
import { type Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';
const ENV = { TRUST_PROXY: '1' };
const newAddress = addressesIn('203.128');

/** Names that claim the site's trust, however they are written. */
const CLAIMING = [
  '✔ 已认证 Verified by Community',
  'Community Account Security',
  'Agent ✓',
  '☑ Agent',
  'Agent ✅',
  'ＶＥＲＩＦＩＥＤ Agent',
  'OFFICIAL agent',
  'OfficialAgent',
  'V e r i f i e d Agent',
  'Certified Helper',
  '官方助手',
  '官 方助手',
  '已認證小幫手',
  '认证应用',
  '社區 App',
  'C.o.m.m.u.n.i.t.y Login',
  '社区安全中心',
  '社群 官方',
];

/** Names that claim nothing: the site's name later in a name is an app for a community, not the site. */
const PLAIN = ['Agent Smith', 'Unofficial Agent', 'Verify My Email', 'Open Source Community Tools', '读书社区', 'MyCommunity'];

forEachDatabase('app names nobody at the site reviewed', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database, { env: ENV }); });
  after(() => t.close());

  function register(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': newAddress() }, body: JSON.stringify(body),
    });
  }

  const DEVELOPER_FORM = { description: '', homepage: '', redirect_uris: 'https://member.example/cb', type: 'public' };

  /** Each of `names` is refused as a claim of the site's trust, by RFC 7591 registration and on the developer page. */
  async function assertRefusedEverywhere(visitor: Visitor, names: readonly string[]): Promise<void> {
    for (const name of names) {
      const response = await register({ redirect_uris: ['https://agent.example/cb'], client_name: name });
      assert.equal(response.status, 400, name);
      const { error, error_description: description } = await response.json() as { error: string; error_description: string };
      assert.equal(error, 'invalid_client_metadata', name);
      assert.match(description, /^client_name must not claim this site's trust/, name);
      assert.equal((await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name })).status, 400, name);
    }
  }

  /** Each of `names` registers, by RFC 7591 registration and on the developer page. */
  async function assertRegistersEverywhere(visitor: Visitor, names: readonly string[]): Promise<void> {
    for (const name of names) {
      assert.equal((await register({ redirect_uris: ['https://agent.example/cb'], client_name: name })).status, 201, name);
      assert.equal((await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name })).status, 303, name);
    }
  }

  async function consentPage(client: TestClient, locale = 'en'): Promise<string> {
    const { browser } = await signedInBrowser(t);
    const page = await browser.fetch(`/oauth/authorize?${authorizeQuery(client, { pkce: pkcePair(), extra: { ui_locales: locale } })}`);
    assert.equal(page.status, 200);
    return page.text();
  }

  test('a self-registered app\'s name that claims the site\'s trust is invalid_client_metadata with an ASCII description, and registers nothing; other names, and the host given for want of a name, register', async () => {
    const before = (await t.deps.stores.clients.listAll()).length;
    for (const name of CLAIMING) {
      const response = await register({ redirect_uris: ['https://agent.example/cb'], client_name: name });
      assert.equal(response.status, 400, name);
      const body = (await response.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_client_metadata', name);
      assert.match(body.error_description, /^client_name must not claim this site's trust/, name);
      assert.match(body.error_description, /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/, `${name}: RFC 6749 5.2's characters`);
    }
    assert.equal((await t.deps.stores.clients.listAll()).length, before, 'nothing registered');
    for (const name of PLAIN) assert.equal((await register({ redirect_uris: ['https://agent.example/cb'], client_name: name })).status, 201, name);
  });

  test('an app that registers itself without a name is named by the host or scheme it sends people back to, unless that claims the site\'s trust: then it is plainly "app"', async () => {
    for (const [redirect, named] of [
      ['https://agent.example/cb', 'agent.example'], ['com.agent.tool:/cb', 'com.agent.tool'],
      ['https://official.example/cb', 'app'], ['https://community-security.example/cb', 'app'], ['community.verified:/cb', 'app'], ['app.official:/cb', 'app'], ['https://community.example/cb', 'app'], ['com.community.app:/cb', 'app'], ['https://community-garden.example/cb', 'community-garden.example'],
    ] as const) {
      const response = await register({ redirect_uris: [redirect], token_endpoint_auth_method: 'none' });
      assert.equal(response.status, 201, redirect);
      assert.equal(((await response.json()) as { client_name: string }).client_name, named, redirect);
    }
  });

  test('a member\'s app may not be registered or renamed on the developer page with a name that claims the site\'s trust, in every language; the name it has may be saved again, and the operator\'s apps keep any name', async () => {
    const { user, visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    const words: Record<string, RegExp> = {
      en: /Name: An application&#39;s name may not claim this site&#39;s trust: no check mark, no word such as “Verified” or “Official”, and not the name Community alone or with words that make it the site’s own, such as “Community Account” or “Community Support”\./,
      'zh-CN': /应用名称不能借用本站的信任：不能带对勾符号，不能含有“认证”“官方”等字样，也不能单用“社区”这个名字，或把它和“账号”“客服”等字样连用，当成本站自己的服务。/,
      'zh-TW': /應用程式名稱不能借用本站的信任：不能帶勾號，不能含有「認證」「官方」等字樣，也不能單用「社群」這個名稱，或把它和「帳號」「客服」等字樣連用，當成本站自己的服務。/,
    };
    for (const [locale, said] of Object.entries(words)) {
      visitor.cookies.set('lang', locale);
      const refused = await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name: '✔ 已认证 Verified by Community' });
      assert.equal(refused.status, 400, locale);
      assert.match(refused.text, said, locale);
    }
    visitor.cookies.set('lang', 'en');
    for (const name of CLAIMING) assert.equal((await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name })).status, 400, name);
    assert.deepEqual(await t.deps.stores.clients.listByOwner(user.id), [], 'nothing registered');
    const registered = await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name: 'Member Tools' });
    assert.equal(registered.status, 303);
    const [app] = await t.deps.stores.clients.listByOwner(user.id);
    const page = `/settings/developers/${app!.clientId}`;
    const renamed = await visitor.post(`${page}/details`, { name: 'Member Tools Official', description: '', homepage: '' });
    assert.equal(renamed.status, 400);
    assert.match(renamed.text, /may not claim this site&#39;s trust/);
    assert.equal((await t.deps.stores.clients.findById(app!.clientId))?.name, 'Member Tools');
    // A name stored before the rule (or given by the operator) is kept when its owner saves other details.
    const { client: older } = await registerClient(t.deps.stores, t.clock, {
      name: 'Community Login Tools', type: 'public', redirectUris: ['https://member.example/cb'], ownerId: user.id, memberRegistered: true,
    });
    assert.equal((await visitor.post(`/settings/developers/${older.clientId}/details`, { name: 'Community Login Tools', description: 'Reads posts.', homepage: '' })).status, 303);
    assert.equal((await t.deps.stores.clients.findById(older.clientId))?.description, 'Reads posts.');
    // The operator answers for its own apps.
    const { client: operators } = await registerClient(t.deps.stores, t.clock, { name: '✔ Community Official', type: 'public', redirectUris: ['https://operator.example/cb'] });
    const consent = await consentPage({ client: operators, redirectUri: 'https://operator.example/cb' });
    assert.match(consent, /<span class="app-name latin-end">✔ Community Official<\/span> is made by the site operators/);
  });

  test('an app nobody reviewed may not lead its name with the site\'s name in any of its languages, nor be named it; one that holds it later registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community', 'Community Account Security', 'ＣＯＭＭＵＮＩＴＹ Login', '社区安全中心', '社群 官方', '社區 App']);
    await assertRegistersEverywhere(visitor, ['Open Source Community Tools', '读书社区', '读书社群 App', 'MyCommunity']);
  });

  test('an ordinary phrase or compound with the site\'s name registers, and the site\'s name beside words of its service or accounts does not, by RFC 7591 and on the developer page: "Community Garden Planner" and 社区服务站 register, "Your Community Account" and 社区红包 do not', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Your Community Account', 'Community Support', 'Sign in to Community', '社区红包', '1社区账号', '社区のお知らせ']);
    await assertRegistersEverywhere(visitor, ['Community Garden Planner', 'Community Radio', 'Community Service Tracker', '社区服务站', '社区中心预约', '社区支持者']);
  });

  test('the site\'s own service in the plural, by two-factor or recovery words, an edition, a company\'s mark, before a tagline, after "the", and in Chinese after a sign-in or before password recovery or online service is refused; ordinary names with those words register, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community Logins', 'Community 2FA', 'Community Member Login', 'Community Recovery', 'Community for iOS', 'Community™', 'Community Support (EU)', 'Sign in to the Community',
      '登录社区', '社区找回密码', '社区在线客服', '社区系统消息', '社区论坛']);
    await assertRegistersEverywhere(visitor, ['Community Recovery Network', 'Community Member Directory', 'Community Garden Planner (Beta)', 'Join the Community', '社区公告板', '社区网球俱乐部']);
  });

  test('the site\'s name leads an app\'s name only as a word of its own: "Communityhub" and "社区团购助手" register, "Community2", "CommunityHub" and "社区账号" do not, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community2', 'Community-hub', 'CommunityHub', '社区账号', '社區帳號登入助手', '社群支援', '社区客服']);
    await assertRegistersEverywhere(visitor, ['Communityhub', '社区团购助手', '社區醫院', '社群媒體管理']);
  });

  test('a site name parted by a letter drawn as punctuation, written in capitals before another word, or in Chinese before sign-in misspelt, authorization, sign-up, 的 and a claim, katakana or 〇 is refused, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Communityꓸhub', 'ꓸCommunity Security', 'Community\u02bbs Login', 'COMMUNITYhub', 'COMMUNITYSecurity', '社区登陆', '社區授權', '社区注册', '社区的账号', '社区アカウント', '社区〇号']);
    await assertRegistersEverywhere(visitor, ['COMMUNITYHUB', '社区的故事']);
  });

  test('"official" in other languages, Trusted, Approved, and Japanese 公認 and 公式 in a Japanese name are refused; Chinese 公式 (formula) and 认定 (determination) are not, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Agent Officiel', 'App Oficial', 'Offiziell Agent', 'Trusted Agent', 'Approved Helper', '公認アプリ', '公式アプリ', '認定ツール']);
    await assertRegistersEverywhere(visitor, ['公式编辑器', '资格认定助手', 'Trust Score']);
  });

  test('a name that imitates a claim with letters the confusables data leaves (l or 1 for I, small capitals, Lisu) or with the OK button or circled 正 is refused as the claim, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['VERlFlED Agent', 'Ver1fied Agent', 'Offlcial Tools', 'Commun1ty Security', 'ᴠᴇʀɪꜰɪᴇᴅ Agent', 'ꓚꓳꓟꓟꓴꓠꓲꓔꓬ Security', '🆗 Agent', '㊣ Agent']);
    await assertRegistersEverywhere(visitor, ['Million Tools', 'Lily Notes']);
  });

  test('a word of what the site holds (an account, its admins, 账号, 管理员) claims at the name\'s end or before a word of access or service, not before an ordinary word: "Community Account Exporter" and "社区账号导出工具" register, "Community Account Login" and "社區帳號安全" do not, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community Account Login', 'Community Account Security', 'Community Admin Panel', '社区账号登录', '社區帳號安全', '社群管理員']);
    await assertRegistersEverywhere(visitor, ['Community Account Exporter', 'Community Admin Tools', '社区账号导出工具', '社群管理員工具']);
  });

  test('"please" before signing in to the site welcomes one there as 请 does: "Please sign in to Community" is refused, "Please Help the Community Garden" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Please sign in to Community', 'Please log into Community']);
    await assertRegistersEverywhere(visitor, ['Please Help the Community Garden']);
  });

  test('English words that lead the site\'s name lead a Chinese one too: "Your 社区账号" and "Sign in to 社区" are refused, "Linux社区" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Your 社区账号', 'Sign in to 社区', 'Welcome to 社群']);
    await assertRegistersEverywhere(visitor, ['Linux社区', 'Python 社区助手']);
  });

  test('a word of what befalls an account claims after a word of what the site holds: "Community Account Suspended" and "社区账号异常" are refused, "Community Protection Fund" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community Account Suspended', 'Community Account Locked', '社区账号异常', '社區帳號凍結通知']);
    await assertRegistersEverywhere(visitor, ['Community Protection Fund', '社区保护伞']);
  });

  test('a possessive after a word of what the site holds (\'s, 的) keeps it before a claim: "Community Account\'s Login" and "社区账号的登录" are refused, "Community Admin\'s Toolkit" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community Account\'s Login', 'Community ID\'s Password', '社区账号的登录', '社區管理員的後台']);
    await assertRegistersEverywhere(visitor, ['Community Admin\'s Toolkit', '社区账号的导出工具']);
  });

  test('the site\'s name in an alphabet before Chinese that claims it is refused whatever comes before it: "My Community账号" and "Garden Community帳號安全" are refused, "My Community团购" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['My Community账号', 'Garden Community帳號安全', 'Hello Community客服中心']);
    await assertRegistersEverywhere(visitor, ['My Community团购', 'Garden Community账号导出工具']);
  });

  test('signing into or onto the site is signing in to it: "Sign into Community", "Log onto the Community", "登录到社区" and "登入到社群" are refused, "Tune into Community Radio" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Sign into Community', 'Log onto the Community', '登录到社区', '登入到社群']);
    await assertRegistersEverywhere(visitor, ['Tune into Community Radio', '到社区服务站']);
  });

  test('the site\'s name misspelt by one slip inside it is refused as the site\'s name is: "Comunity", "Commuinty Support" and "My Comunity账号" are refused, "Comunity Garden Planner" and "Communitys" register, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Comunity', 'Commuinty Support', 'Commmunity Login', 'My Comunity账号']);
    await assertRegistersEverywhere(visitor, ['Comunity Garden Planner', 'Communitys', 'Xommunity Login']);
  });

  test('a word of who the site\'s people are or where it runs (member, web, app) after a word of who runs it or what it holds names whom a tool serves, and claims only as the name\'s last words: "Community Staff Member Directory" and "Community Admin Web Tools" register, "Community Staff Team" and "Community Account Security Checker" do not, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Community Staff Team', 'Community Admin App', 'Community Account Security Checker', 'Community Admin Panel Helper']);
    await assertRegistersEverywhere(visitor, ['Community Staff Member Directory', 'Community Admin Web Tools', 'Community Account Points Tracker']);
  });

  test('a sentence a phishing page says of an account, a sign-in button\'s words, and Japanese words of accounts and sign-in after the site\'s name claim it: "Your Community account is suspended", "Continue to Community" and "My Communityアカウント" are refused as "Community Account Suspended" and "My Community账号" are; "Is Community Garden Open" and "Go to Community Garden" register, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Your Community account is suspended', 'Community IDs were locked', 'Continue to Community', 'Continue with Community', 'Back to Community',
      'My Communityアカウント', 'Communityのログイン', 'Community サポート']);
    await assertRegistersEverywhere(visitor, ['Is Community Garden Open', 'Go to Community Garden', 'My Communityガーデン']);
  });

  test('a Japanese word written with the prolonged sound mark ー claims after the site\'s name as the others do: "My Communityサポート", "My Communityパスワード" and "My Communityｾﾝﾀｰ" are refused, "My Communityカレンダー" and "My Communityサポートツール" register, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['My Communityサポート', 'My Communityパスワード', 'My Communityｾﾝﾀｰ', 'My Communityアカウントサービス']);
    await assertRegistersEverywhere(visitor, ['My Communityカレンダー', 'My Communityサポートツール']);
  });

  test('verbs and adverbs one after another between a word of what the site holds and a word of its state claim as one verb does: "Your Community account has been temporarily suspended" and "Community ID is now restricted" are refused, "Community Account Is Now Open Source" registers, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['Your Community account has been temporarily suspended', 'Community ID is now restricted', 'Your Community account will soon be closed']);
    await assertRegistersEverywhere(visitor, ['Community Account Is Now Open Source', 'Community Staff Will Be There']);
  });

  test('Japanese particles join the site\'s name to a claim as English words do: "My Communityでログイン" (sign in with), "My Communityにログイン" (sign in to) and "My Communityアカウントが停止されました" (is suspended) are refused, "My Communityにようこそ" and "My Communityのイベントが中止" register, by RFC 7591 and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    await assertRefusedEverywhere(visitor, ['My Communityでログイン', 'My Communityにログイン', 'My Communityアカウントが停止されました', 'My Communityのアカウントは一時停止されています']);
    await assertRegistersEverywhere(visitor, ['My Communityにようこそ', 'My Communityのイベントが中止', 'My Communityで遊ぼう']);
  });

  test('one bound holds for marks stacked on one character in an app\'s name and a nickname: more than 4 nonspacing or enclosing marks are refused, 4 (Tibetan ཧྨྱཱཾ) are kept, and spacing marks are not counted, by RFC 7591, the developer page and the profile page', async () => {
    const { user, visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    const stacked = `Agent x${'\u0301'.repeat(5)}`;
    const response = await register({ redirect_uris: ['https://agent.example/cb'], client_name: stacked });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error_description: string }).error_description, /^client_name must have at most 4 combining marks on one character/);
    const form = await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name: stacked });
    assert.equal(form.status, 400);
    assert.match(form.text, /Use at most 4 accents or other marks on one letter/);
    await assertRegistersEverywhere(visitor, ['ཧྨྱཱཾ Agent', `Agent x${'\u0301'.repeat(4)}`]);
    assert.equal((await visitor.post('/settings/profile', { nickname: `Zox${'\u0301'.repeat(5)}` })).status, 400);
    for (const nickname of [`Zox${'\u0301'.repeat(4)}`, 'ཧྨྱཱཾ', 'कौंकौं']) {
      assert.equal((await visitor.post('/settings/profile', { nickname })).status, 303, nickname);
      assert.equal((await t.deps.stores.users.findById(user.id))?.nickname, nickname.normalize('NFC'), nickname);
    }
  });

  test('a name and description an app has are saved again unchanged though a stricter bound would refuse them (6 marks on one letter, saved when 8 were allowed); changed, they are refused, on the developer page', async () => {
    const { user, visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Older Tools', type: 'public', redirectUris: ['https://member.example/cb'], ownerId: user.id, memberRegistered: true });
    const older = { name: `Older Tools x${'\u0301'.repeat(6)}`, description: `Reads posts y${'\u0301'.repeat(6)}.`, homepageUrl: '' };
    assert.ok(await t.deps.stores.clients.setDetails(client.clientId, older, t.clock.now(), 'owner'));
    const page = `/settings/developers/${client.clientId}/details`;
    assert.equal((await visitor.post(page, { name: older.name, description: older.description, homepage: 'https://older.example/' })).status, 303);
    const saved = await t.deps.stores.clients.findById(client.clientId);
    assert.deepEqual([saved?.name, saved?.description, saved?.homepageUrl], [older.name, older.description, 'https://older.example/']);
    assert.equal((await visitor.post(page, { name: `${older.name}!`, description: older.description, homepage: '' })).status, 400);
    assert.equal((await visitor.post(page, { name: older.name, description: `${older.description}!`, homepage: '' })).status, 400);
  });

  test('an app\'s description is well-formed Unicode as its name is: a lone surrogate, which a JSON body can carry and a page would show as U+FFFD, is refused on the developer page, not stored as U+FFFD', async () => {
    const { user, visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    const { client } = await registerClient(t.deps.stores, t.clock, { name: 'Surrogate Tools', type: 'public', redirectUris: ['https://member.example/cb'], ownerId: user.id, memberRegistered: true });
    const details = (description: string) => visitor.request(`/settings/developers/${client.clientId}/details`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: t.baseUrl },
      body: JSON.stringify({ _csrf: visitor.cookies.get('svc_csrf'), name: 'Surrogate Tools', description, homepage: '' }),
    });
    const refused = await details('Reads posts \ud800.');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /Description: Remove the broken character/);
    assert.equal((await t.deps.stores.clients.findById(client.clientId))?.description, '');
    assert.equal((await details('Reads posts \u{1f916}.')).status, 303);
    assert.equal((await t.deps.stores.clients.findById(client.clientId))?.description, 'Reads posts \u{1f916}.');
  });

  test('a slip of typing in an operator\'s site name is a neighbouring key, inside one word: beside "Investors", "Inventors Hub" registers and "Invedtors Hub" does not; beside "Riverside", "Rivers Side App" registers and "Riversde App" does not, by RFC 7591 and on the developer page', async () => {
    for (const [site, refused, registers] of [['Investors', 'Invedtors Hub', 'Inventors Hub'], ['Riverside', 'Riversde App', 'Rivers Side App']] as const) {
      const named = await startTestApp(database, { env: { ...ENV, SITE_NAME: site } });
      try {
        const { visitor } = await signedInMember(named, `names${++counter}`, PASSWORD);
        const registration = (name: string) => fetch(`${named.baseUrl}/api/oauth/register`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': newAddress() }, body: JSON.stringify({ redirect_uris: ['https://agent.example/cb'], client_name: name }),
        });
        assert.equal((await registration(refused)).status, 400, refused);
        assert.equal((await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name: refused })).status, 400, refused);
        assert.equal((await registration(registers)).status, 201, registers);
        assert.equal((await visitor.post('/settings/developers', { ...DEVELOPER_FORM, name: registers })).status, 303, registers);
      } finally {
        await named.close();
      }
    }
  });

  test('direction controls are refused in an app\'s name, by RFC 7591 registration and on the developer page', async () => {
    const { visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    for (const control of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f']) {
      const name = `Agent ${control}tnega`;
      const response = await register({ redirect_uris: ['https://agent.example/cb'], client_name: name });
      assert.equal(response.status, 400, JSON.stringify(control));
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_client_metadata');
      const page = await visitor.post('/settings/developers', { name, description: '', homepage: '', redirect_uris: 'https://member.example/cb', type: 'public' });
      assert.equal(page.status, 400, JSON.stringify(control));
      assert.match(page.text, /Name: Remove the control or invisible characters/);
    }
  });

  test('the account deletion page isolates each right-to-left name in its list of the member\'s apps, so two of them beside a separator keep their order', async () => {
    const { user, visitor } = await signedInMember(t, `names${++counter}`, PASSWORD);
    for (const name of ['تطبيق', 'יישום', 'Plain Tools']) {
      await registerClient(t.deps.stores, t.clock, { name, type: 'public', redirectUris: ['https://member.example/cb'], ownerId: user.id, memberRegistered: true });
    }
    for (const locale of ['en', 'zh-CN']) {
      visitor.cookies.set('lang', locale);
      const page = await visitor.post('/settings/account/delete', {});
      assert.equal(page.status, 200, locale);
      assert.ok(page.text.includes('\u2068تطبيق\u2069') && page.text.includes('\u2068יישום\u2069'), `${locale}: each right-to-left name isolated`);
      assert.ok(page.text.includes('Plain Tools') && !page.text.includes('\u2068Plain Tools'), `${locale}: a left-to-right name left bare`);
    }
  });

  test('a right-to-left app name is isolated in <bdi> wherever the consent page sets it in a sentence, and in the title as Unicode isolates; an older name holding a direction override is isolated too', async () => {
    const rtl = 'تطبيق الوكيل';
    const response = await register({ redirect_uris: ['https://agent.example/cb'], client_name: rtl, token_endpoint_auth_method: 'none' });
    assert.equal(response.status, 201);
    const { client_id: clientId } = (await response.json()) as { client_id: string };
    const app: TestClient = { client: { clientId } as TestClient['client'], redirectUri: 'https://agent.example/cb' };
    for (const [locale, heading, warning] of [
      ['en', /Allow <strong class="app-name[^"]*"><bdi>تطبيق الوكيل<\/bdi><\/strong> to use your account\?/, /<p class="alert"><span class="app-name[^"]*"><bdi>تطبيق الوكيل<\/bdi><\/span> registered itself with this site/],
      ['zh-CN', /<strong class="app-name[^"]*"><bdi>تطبيق الوكيل<\/bdi><\/strong>/, /<p class="alert"><span class="app-name[^"]*"><bdi>تطبيق الوكيل<\/bdi><\/span>是自行注册的应用/],
    ] as const) {
      const page = await consentPage(app, locale);
      assert.match(page, heading, locale);
      assert.match(page, warning, locale);
      assert.ok(page.includes(`\u2068${rtl}\u2069`), `${locale}: the title isolates it`);
    }
    // A member's app: "made by" sets its name in a sentence too.
    const { user } = await signedInMember(t, `names${++counter}`, PASSWORD);
    const { client: hebrew } = await registerClient(t.deps.stores, t.clock, {
      name: 'יישום', type: 'public', redirectUris: ['https://member.example/cb'], ownerId: user.id, memberRegistered: true,
    });
    assert.match(await consentPage({ client: hebrew, redirectUri: 'https://member.example/cb' }), /<bdi>יישום<\/bdi><\/span> is made by/);
    // A row from before direction controls were refused: its override ends with its name.
    const older = await t.deps.stores.clients.create({
      clientId: `older${++counter}`, name: 'Agent \u202eevil', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: ['https://agent.example/cb'], allowedScopes: ['profile:read', 'posts:read'], secretHash: null, idTokenAlg: 'RS256', selfRegistered: true,
    }, t.clock.now());
    assert.match(await consentPage({ client: older, redirectUri: 'https://agent.example/cb' }), /<p class="alert"><span class="app-name latin-start latin-end"><bdi>Agent \u202eevil<\/bdi><\/span> registered itself/);
    // An ordinary name is left bare.
    const { client: plain } = await registerClient(t.deps.stores, t.clock, { name: 'Plain App', type: 'public', redirectUris: ['https://plain.example/cb'] });
    const bare = await consentPage({ client: plain, redirectUri: 'https://plain.example/cb' });
    assert.match(bare, /<span class="app-name latin-start latin-end">Plain App<\/span> is made by the site operators/);
    assert.doesNotMatch(bare, /<bdi>Plain App/);
  });
});
