/**
 * The site's name as its operator sets it (SITE_NAME, SITE_NAME_<LANGUAGE>; docs/operations.md):
 * the pages in each language, the mail's subject and sender, the authenticator app's entry and a
 * passkey carry it. Not storage: one database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { beginTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

describe('a site named by its operator', () => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(temporarySqliteDatabase(), {
      hostname: 'localhost',
      env: { SITE_NAME: 'Riverside, Est. 2009', SITE_NAME_ZH_CN: '河畔{社区}' },
    });
  });
  after(async () => {
    await t.close();
  });

  const page = async (language: string) => (await fetch(`${t.baseUrl}/`, { headers: { 'accept-language': language } })).text();

  test('pages name the site in the language\'s own name where one is set, else in SITE_NAME', async () => {
    const chinese = await page('zh-CN');
    assert.match(chinese, /<title>[^<]* · 河畔\{社区\}<\/title>/, 'braces are the name\'s own, not a message\'s');
    assert.match(chinese, /<a class="brand" href="\/">河畔\{社区\}<\/a>/);
    for (const language of ['en', 'zh-TW']) {
      assert.match(await page(language), /<a class="brand" href="\/">Riverside, Est\. 2009<\/a>/, language);
    }
  });

  test('the demo app names the service as the service\'s pages do', async () => {
    const demo = async (language: string) => (await fetch(`${t.baseUrl}/demo-app`, { headers: { 'accept-language': language } })).text();
    assert.match(await demo('en'), /It is not part of Riverside, Est\. 2009:/);
    assert.match(await demo('zh-CN'), /它不属于河畔\{社区\}：/);
  });

  test('a mail names the site in its subject, in the reader\'s language, and in its sender', async () => {
    await t.deps.mailer.send(t.deps.stores, { to: 'reader@example.test', userId: null, locale: 'zh-CN', name: 'passwordReset', values: { name: 'reader', username: 'reader', link: `${t.baseUrl}/password/reset?token=x`, minutes: 30, expires: 'soon' } }, t.clock.now());
    await t.deps.mailDeliveries.runOnce();
    const [mail] = t.smtp.to('reader@example.test');
    assert.equal(mail?.subject, '重置你的河畔{社区}密码');
    assert.equal(mail?.from, '"Riverside, Est. 2009" <no-reply@localhost>', 'a name with a comma is a quoted string (RFC 5322 3.4)');
  });

  test('the authenticator app\'s entry and a new passkey carry the site\'s name', async () => {
    const { user, visitor } = await signedInMember(t, 'named1', PASSWORD);
    const enrolment = await beginTotpEnrolment(t.deps, user);
    assert.equal(new URL(enrolment!.uri).searchParams.get('issuer'), 'Riverside, Est. 2009');
    const options = await visitor.post('/settings/security/passkeys/options', {});
    assert.equal(options.status, 200);
    assert.equal((JSON.parse(options.text) as { rp: { name: string } }).rp.name, 'Riverside, Est. 2009');
  });
  test('an app nobody reviewed may not lead its name with the part of the site\'s name before its tagline, in any language: "Riverside, Est. 2009" is called Riverside, 河畔{社区} 河畔', async () => {
    const register = (name: string) => fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://agent.example/cb'], client_name: name }),
    });
    for (const name of ['Riverside Account Security', 'Riverside', '河畔账号', '河畔社区']) {
      const response = await register(name);
      assert.equal(response.status, 400, name);
      assert.match(((await response.json()) as { error_description: string }).error_description, /^client_name must not claim this site's trust/, name);
    }
    for (const name of ['My Riverside Guide', 'Riversides', '河畔跑步']) assert.equal((await register(name)).status, 201, name);
  });

  test('an operator\'s site name is read as the catalogs\' is: a word of what it holds claims only before a claim or at the end, Chinese after it claims, signing into it signs in, and one slip inside it is read: "Riverside Admin Tools" registers, "Riverside Account Login", "My Riverside帳號", "登录到河畔" and "Rivreside Login" do not', async () => {
    const register = (name: string) => fetch(`${t.baseUrl}/api/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://agent.example/cb'], client_name: name }),
    });
    for (const name of ['Riverside Account Login', '河畔账号安全', 'My Riverside帳號', 'Sign into Riverside', '登录到河畔', 'Rivreside Login', 'Riversde']) {
      const response = await register(name);
      assert.equal(response.status, 400, name);
      assert.match(((await response.json()) as { error_description: string }).error_description, /^client_name must not claim this site's trust/, name);
    }
    for (const name of ['Riverside Admin Tools', '河畔账号导出工具', 'My Riverside团购', 'Rivreside Gardens']) assert.equal((await register(name)).status, 201, name);
  });
});
