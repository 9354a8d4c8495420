/**
 * E-mail and the way back into an account (INTERFACE section 12, issue 32 item 4), over real
 * HTTP on each database, with a real SMTP server in the test process: a private address verified
 * by a single-use link; a forgotten password reset by a single-use link that needs the second
 * step when two-step is on and ends every session; answers that never tell whether an account
 * exists; limits per account and per address; security notices in the member's language.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { createAccount, setAccountStatus, updateProfile } from '../../src/core/accounts/accounts.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { AccountUnusableError } from '../../src/core/errors.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { EMAIL_MAX_LENGTH, VERIFY_LINK_MS, changeEmail, VERIFY_MAILS_PER_ACCOUNT, VERIFY_MAILS_PER_ADDRESS, checkEmailAddress } from '../../src/core/accounts/email.js';
import { RESET_LINK_MS, RESET_MAILS_PER_ACCOUNT, RESET_REQUESTS_PER_ADDRESS, RESET_WINDOW_SECONDS } from '../../src/core/accounts/password-reset.js';
import { PASSWORD_HASHES_AT_ONCE, PASSWORD_HASHES_WAITING, passwordHashQueue } from '../../src/core/accounts/passwords.js';
import type { User } from '../../src/core/accounts/ports.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { beginTotpEnrolment, confirmTotpEnrolment } from '../../src/core/accounts/two-step.js';
import { MAIL_FIRST_RETRY_MS } from '../../src/core/mail/outbox.js';
import { formatSiteTime } from '../../src/core/site-time.js';
import { KyselyMemberEmailStore } from '../../src/storage/repositories/accounts/member-emails.js';
import { KyselyUserStore } from '../../src/storage/repositories/accounts/users.js';
import { authorizeQuery, consentForm, newClient, pkcePair } from '../oauth/helpers.js';
import { type TestAppWithSmtp, startAppWithSmtp, startTestApp } from '../support/app.js';
import { forEachDatabase, whileInsertsFail } from '../support/databases.js';
import { fullWidth } from '../support/full-width.js';
import { normalizes } from '../support/normalizes.js';
import { deliverMail, verifiedAddress } from '../support/member-mail.js';
import type { ReceivedMail } from '../support/smtp.js';
import { TimingClient } from '../support/timing-client.js';
import { AddressedVisitor, type Fields, type PageResponse, Visitor } from './visitor.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

function linkIn(mail: ReceivedMail | undefined, path: string): string {
  assert.ok(mail, 'a mail arrived');
  const found = new RegExp(`http://[^\\s]+${path.replace(/[?/]/g, '\\$&')}\\?token=[A-Za-z0-9_-]+`).exec(mail.text)?.[0];
  assert.ok(found, `the mail holds a ${path} link`);
  return found;
}

/** The page's text without what differs from one request to the next (the CSRF token). */
const comparable = (page: PageResponse) => page.text.replace(/name="_csrf" value="[^"]*"/g, '');

forEachDatabase('e-mail and the way back in', (database) => {
  let t: TestAppWithSmtp;

  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  const deliver = () => deliverMail(t);
  const address = () => `m${randomBytes(5).toString('hex')}@example.test`;
  const relative = (link: string) => link.slice(t.baseUrl.length);

  async function member(): Promise<{ user: User; visitor: AddressedVisitor }> {
    const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const visitor = new AddressedVisitor(t.baseUrl);
    await visitor.signIn(user.username, PASSWORD);
    return { user, visitor };
  }

  /** A member who saved a new address on the e-mail page, and the link to `path` mailed to it. */
  async function memberMailed(path: string): Promise<{ user: User; visitor: AddressedVisitor; email: string; link: string }> {
    const { user, visitor } = await member();
    const email = address();
    await visitor.post('/settings/email', { email });
    await deliver();
    return { user, visitor, email, link: relative(linkIn(t.smtp.to(email)[0], path)) };
  }

  /** A member whose address is verified through the pages and the mailed link. */
  async function verifiedMember(): Promise<{ user: User; visitor: AddressedVisitor; email: string }> {
    const { user, visitor } = await member();
    return { user, visitor, email: await verifiedAddress(t, visitor, address()) };
  }

  async function forgot(login: string, visitor: Visitor = new AddressedVisitor(t.baseUrl)): Promise<PageResponse> {
    const page = await visitor.post('/password/forgot', { login });
    await deliver();
    return page;
  }

  async function resetLink(user: User, email: string): Promise<string> {
    assert.equal((await forgot(user.username)).status, 200);
    return linkIn(t.smtp.to(email).filter((m) => m.text.includes('/password/reset?token=')).at(-1), '/password/reset');
  }

  /** When the newest link of `purpose` mailed to the account ends, as stored. */
  const storedExpiry = async (user: User, purpose: 'verify_email' | 'reset_password') => Number((await t.deps.database.db.selectFrom('email_links')
    .select('expires_at').where('user_id', '=', user.id).where('purpose', '=', purpose).orderBy('created_at', 'desc').executeTakeFirstOrThrow()).expires_at);

  const reset = (link: string, fields: Fields = {}) => {
    const token = new URL(link).searchParams.get('token')!;
    return new AddressedVisitor(t.baseUrl).post('/password/reset', { token, password: NEW_PASSWORD, ...fields });
  };

  /** Where the language picker on `page` brings `browser` back to, in Chinese. */
  async function languagePicked(browser: Visitor, page: PageResponse): Promise<string> {
    const action = /<form method="post" action="(\/language\?[^"]+)" class="language-picker">/.exec(page.text)?.[1];
    assert.ok(action, 'the page has a language picker');
    const switched = await browser.post(action.replaceAll('&amp;', '&'), { lang: 'zh-CN' });
    assert.equal(switched.status, 303);
    return switched.location!;
  }

  test('an e-mail address is verified by the link mailed to it, which works once', async () => {
    const { user, visitor } = await member();
    const email = address();
    const saved = await visitor.post('/settings/email', { email });
    assert.equal(saved.status, 200);
    assert.match(saved.text, new RegExp(email));
    await deliver();
    const link = linkIn(t.smtp.to(email)[0], '/email/verify');
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.verifiedAt, null);
    assert.equal((await new Visitor(t.baseUrl).get(relative(link))).status, 200, 'the link needs no sign-in');
    const verifiedAt = (await t.deps.stores.memberEmails.find(user.id))?.verifiedAt;
    assert.ok(verifiedAt);
    t.clock.advance(60_000);
    await visitor.get(relative(link));
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.verifiedAt, verifiedAt, 'used once: opened again, it verifies nothing again');
    assert.equal((await t.deps.stores.securityEvents.listForUser(user.id, 0, 50)).items.filter((e) => e.kind === 'email.verified').length, 1);
    assert.equal((await visitor.get('/email/verify?token=nothing')).status, 400);
  });

  test('a verification link opened again once its address is verified says the address is verified, in the page\'s language', async () => {
    const { user, link } = await memberMailed('/email/verify');
    // A mail scanner opens the link before its reader does.
    assert.equal((await new Visitor(t.baseUrl).get(link)).status, 200);
    const reader = new AddressedVisitor(t.baseUrl);
    reader.cookies.set('lang', 'zh-CN');
    const opened = await reader.get(link);
    assert.equal(opened.status, 200, 'not "used, expired or invalid"');
    assert.match(opened.text, new RegExp(t.deps.words('zh-CN').text('recovery.verifyDone')));
    // The language picker on that page comes back to the link.
    const switched = await reader.post(`/language?${new URLSearchParams({ return_to: link })}`, { lang: 'zh-TW' });
    assert.equal(switched.location, link);
    const again = await reader.get(link);
    assert.equal(again.status, 200);
    assert.match(again.text, new RegExp(t.deps.words('zh-TW').text('recovery.verifyDone')));
    assert.equal((await t.deps.stores.securityEvents.listForUser(user.id, 0, 50)).items.filter((e) => e.kind === 'email.verified').length, 1, 'verified once');
  });

  test('a verification link stops working after 24 hours', async () => {
    const { user, visitor } = await member();
    const email = address();
    await visitor.post('/settings/email', { email });
    await deliver();
    t.clock.advance(24 * 3600 * 1000 + 1000);
    assert.equal((await visitor.get(relative(linkIn(t.smtp.to(email)[0], '/email/verify')))).status, 400);
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.verifiedAt, null);
  });

  test('the e-mail address is private: no page but the member\'s own settings shows it', async () => {
    const { user, visitor, email } = await verifiedMember();
    assert.match((await visitor.get('/settings/email')).text, new RegExp(email));
    for (const path of [`/u/${user.username}`, '/settings/profile', '/settings/security']) {
      assert.ok(!(await visitor.get(path)).text.includes(email), path);
    }
    const other = await member();
    assert.ok(!(await other.visitor.get('/settings/email')).text.includes(email));
  });

  test('a change of address mails a notice to the old verified address', async () => {
    const { visitor, email } = await verifiedMember();
    const next = address();
    assert.equal((await visitor.post('/settings/email', { email: next })).status, 200);
    await deliver();
    assert.equal(t.smtp.to(email).length, 2, 'the verification link, then the notice');
    assert.match(t.smtp.to(email)[1]!.subject, /change of the e-mail address .* was asked/);
    assert.ok(!t.smtp.to(email)[1]!.text.includes(next), 'the notice does not name the new address');
    linkIn(t.smtp.to(next)[0], '/email/verify');
  });

  test('a change of address keeps the verified address for a password reset until the new one is verified, which then replaces it', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    const asked = await visitor.post('/settings/email', { email: next });
    assert.equal(asked.status, 200);
    assert.ok(asked.text.includes(next) && asked.text.includes(email), 'the page names both: the new one pending, the old one kept');
    await deliver();
    const link = linkIn(t.smtp.to(next)[0], '/email/verify');
    const kept = await t.deps.stores.memberEmails.find(user.id);
    assert.equal(kept?.address, email);
    assert.ok(kept?.verifiedAt, 'still verified');
    assert.equal(kept?.pending, next);
    await resetLink(user, email);
    await forgot(next);
    assert.ok(!t.smtp.to(next).some((m) => m.text.includes('/password/reset?token=')), 'the pending address gets no reset link');
    assert.equal((await new Visitor(t.baseUrl).get(relative(link))).status, 200);
    const replaced = await t.deps.stores.memberEmails.find(user.id);
    assert.equal(replaced?.address, next);
    assert.ok(replaced?.verifiedAt);
    assert.equal(replaced?.pending, null);
    const before = t.smtp.to(email).length;
    await forgot(email);
    assert.equal(t.smtp.to(email).length, before, 'the old address is no longer the account\'s');
    await resetLink(user, next);
  });

  test('a pending change of address is shown as pending and can be cancelled: the verified address stays and the mailed link stops working', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    const link = linkIn(t.smtp.to(next)[0], '/email/verify');
    const page = await visitor.get('/settings/email');
    assert.match(page.text, /action="\/settings\/email\/cancel"/);
    assert.ok(page.text.includes(`change it to ${next}`), 'the new address is shown as pending');
    const cancelled = await visitor.post('/settings/email/cancel', {});
    assert.equal(cancelled.status, 200);
    assert.ok(!cancelled.text.includes('/settings/email/cancel'), 'nothing left to cancel');
    assert.equal((await new Visitor(t.baseUrl).get(relative(link))).status, 400, 'the link is worthless');
    const kept = await t.deps.stores.memberEmails.find(user.id);
    assert.equal(kept?.address, email);
    assert.ok(kept?.verifiedAt);
    assert.equal(kept?.pending, null);
  });

  test('cancelling a change from a page left open after the new address was verified says there was nothing to cancel, never that the old address stays', async () => {
    const { visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    assert.equal((await new Visitor(t.baseUrl).get(relative(linkIn(t.smtp.to(next)[0], '/email/verify')))).status, 200);
    const late = await visitor.post('/settings/email/cancel', {});
    assert.equal(late.status, 200);
    assert.ok(!late.text.includes('The change is cancelled') && !late.text.includes(email), 'no word that the old address stays');
    assert.ok(late.text.includes(`No change was waiting to be cancelled: your address is ${next}`));
  });

  test('deleting the account ends a pending change of address: its mailed link verifies nothing', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    const link = linkIn(t.smtp.to(next)[0], '/email/verify');
    assert.equal((await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    assert.equal((await new Visitor(t.baseUrl).get(relative(link))).status, 400, 'the link is worthless');
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, `the deleted account holds neither ${email} nor the address it never proved`);
  });

  test('deleting the account erases its e-mail address, verified and pending, the links mailed to it and its mail in the outbox: no row holds the address, and a new account has it verified', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    // A mail still queued when the account goes: its recipient and body go with it.
    await visitor.post('/settings/email', { email: next });
    assert.equal((await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    const { db } = t.deps.database;
    const keys = [email, next];
    assert.deepEqual(await db.selectFrom('member_emails').select('user_id')
      .where((eb) => eb.or([eb('user_id', '=', user.id), eb('address_key', 'in', keys), eb('pending_address_key', 'in', keys)])).execute(), [], 'no address row');
    assert.deepEqual(await db.selectFrom('email_links').select('token_hash').where('user_id', '=', user.id).execute(), [], 'no link mailed to it');
    assert.deepEqual(await db.selectFrom('mail_outbox').select(['id', 'sent_at'])
      .where((eb) => eb.or([eb('user_id', '=', user.id), eb(eb.fn('lower', ['recipient']), 'in', keys)])).execute(), [], 'no mail to it, queued or sent');

    const { user: newcomer, visitor: newBrowser } = await member();
    await verifiedAddress(t, newBrowser, email);
    assert.equal((await t.deps.stores.memberEmails.find(newcomer.id))?.verifiedAt !== null, true, 'the address is verified on the new account');
    assert.deepEqual(await t.deps.stores.memberEmails.verifiedOwners(email), [newcomer.id], 'and on no other');
  });

  test('an address change racing the member\'s own deletion leaves no address: the address, its link and its mails are written only for an active account, which the deletion waits for or sees', async () => {
    const { user, visitor } = await verifiedMember();
    // The limits would let 5 changes through; the race needs many, from pages read before the deletion.
    const deps = { ...t.deps, limiter: { ...t.deps.limiter, hit: async () => ({ allowed: true, limit: 1000, remaining: 1000, resetAt: 0 }), refund: async () => {} } };
    const changes: Array<Promise<unknown>> = [];
    let deleted = false;
    const deletion = visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD }).finally(() => { deleted = true; });
    // Changes from the deletion's start to past its end, a few at a time, as many tabs would send them.
    for (let i = 0; i < 40 || (!deleted && i < 400); i += 1) {
      changes.push(changeEmail(deps, user, address(), { address: '192.0.2.7' }, 'en').catch((error: unknown) => {
        if (!(error instanceof AccountUnusableError)) throw error;
      }));
      await setTimeout(5);
    }
    assert.equal((await deletion).status, 303);
    await Promise.all(changes);
    const { db } = t.deps.database;
    assert.deepEqual(await db.selectFrom('member_emails').select('address').where('user_id', '=', user.id).execute(), [], 'no address row');
    assert.deepEqual(await db.selectFrom('email_links').select('purpose').where('user_id', '=', user.id).execute(), [], 'no link');
    assert.deepEqual(await db.selectFrom('mail_outbox').select('recipient').where('user_id', '=', user.id).execute(), [], 'no mail');
  });

  test('a nickname, bio or avatar saved as the member deletes the account is not kept: the profile is written only for an active account', async () => {
    const { user, visitor } = await member();
    assert.equal((await visitor.post('/settings/account/delete', { confirm: 'yes', password: PASSWORD })).status, 303);
    // The forms read the account before the deletion and write after it.
    await assert.rejects(updateProfile(t.deps.stores, t.clock, user.id, { nickname: 'Still here', bio: 'my bio' }), AccountUnusableError);
    assert.equal(await t.deps.stores.users.setAvatar(user.id, 'image/png', new Uint8Array([1, 2, 3]), t.clock.now()), false);
    const after = await t.deps.stores.users.findById(user.id);
    assert.deepEqual([after?.nickname, after?.bio, await t.deps.stores.users.findAvatar(user.id)], [user.username, '', undefined]);
  });

  test('a verification link of an account staff suspended, banned or deleted verifies nothing and says it cannot be used, in the reader\'s language; the change it was for is dropped, and the account made active again does not bring it back', async () => {
    for (const status of ['suspended', 'banned', 'deleted'] as const) {
      const { user, visitor, email } = await verifiedMember();
      const next = address();
      await visitor.post('/settings/email', { email: next });
      await deliver();
      const link = relative(linkIn(t.smtp.to(next)[0], '/email/verify'));
      await setAccountStatus(t.deps.stores, t.clock, user.id, status);
      const page = await new Visitor(t.baseUrl).request(link, { headers: { 'accept-language': 'zh-CN' } });
      assert.equal(page.status, 400, status);
      assert.ok(page.text.includes('此链接无法使用'), `${status}: the page says the link cannot be used, in Chinese`);
      const kept = await t.deps.stores.memberEmails.find(user.id);
      assert.deepEqual([kept?.address, kept?.pending], [email, null], `${status}: the verified address stays, the change is gone`);
      await setAccountStatus(t.deps.stores, t.clock, user.id, 'active');
      assert.equal((await new Visitor(t.baseUrl).get(link)).status, 400, `${status}: the link stays spent once the account is active again`);
      assert.equal((await t.deps.stores.memberEmails.find(user.id))?.address, email, status);
    }
  });

  test('saving the verified address again while a change waits cancels the change and says so, naming both addresses', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    const link = relative(linkIn(t.smtp.to(next)[0], '/email/verify'));
    const again = await visitor.post('/settings/email', { email });
    assert.equal(again.status, 200);
    assert.ok(again.text.includes(`The change to ${next} is cancelled: ${email} stays your address.`), 'the page says the change is cancelled');
    assert.ok(!again.text.includes('already yours and verified'), 'not "unchanged"');
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.pending, null);
    assert.equal((await new Visitor(t.baseUrl).get(link)).status, 400, 'the new address\'s link is worthless');
    assert.ok((await visitor.post('/settings/email', { email })).text.includes('That address is already yours and verified.'), 'with no change waiting, nothing is cancelled');
  });

  test('racing requests for one change of address mail the old address one notice', async () => {
    for (let round = 0; round < 3; round += 1) {
      const { visitor, email } = await verifiedMember();
      const next = address();
      const answers = await Promise.all(Array.from({ length: VERIFY_MAILS_PER_ADDRESS }, () => visitor.post('/settings/email', { email: next })));
      assert.deepEqual(answers.map((a) => a.status), answers.map(() => 200));
      await deliver();
      assert.equal(t.smtp.to(email).filter((m) => /change of the e-mail address .* was asked/.test(m.subject)).length, 1, `round ${round + 1}`);
    }
  });

  test('an address other accounts used up its day\'s verification mails on can still be given by its owner: a mail\'s "Not you?" link takes it off the account that asked, and lets the browser that followed it past the address\'s limit, no one else', async () => {
    const victim = address();
    const other = await member();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await other.visitor.post('/settings/email', { email: victim })).status, 200);
    // The account that asked moves on, which ends every link it was mailed.
    assert.equal((await other.visitor.post('/settings/email', { email: address() })).status, 200);
    const owner = await member();
    const refused = await owner.visitor.post('/settings/email', { email: victim });
    assert.equal(refused.status, 429);
    assert.ok(refused.text.includes('follow its &quot;Not you?&quot; link') || refused.text.includes('follow its "Not you?" link'), 'the page says how its owner gets past it');
    await deliver();
    assert.equal(t.smtp.to(victim).length, VERIFY_MAILS_PER_ADDRESS, 'no more mails than the limit');
    const notMine = relative(linkIn(t.smtp.to(victim)[0], '/email/not-mine'));
    const shown = await owner.visitor.get(notMine);
    assert.equal(shown.status, 200, 'an ended link still proves the mail reached the address');
    assert.ok(shown.text.includes(other.user.username), 'the page names the account that asked');
    const token = new URL(notMine, t.baseUrl).searchParams.get('token')!;
    const done = await owner.visitor.post('/email/not-mine', { token });
    assert.equal(done.status, 200);
    // The account that asked moved on: nothing was taken off it, and the page says so (attack126).
    assert.ok(done.text.includes(`is not waiting for ${victim} any more`) && done.text.includes('so nothing was taken off it'));
    const saved = await owner.visitor.post('/settings/email', { email: victim });
    assert.equal(saved.status, 200, 'the browser that followed the link passes the address\'s limit');
    await deliver();
    assert.equal((await new Visitor(t.baseUrl).get(relative(linkIn(t.smtp.to(victim).at(-1), '/email/verify')))).status, 200);
    assert.ok((await t.deps.stores.memberEmails.find(owner.user.id))?.verifiedAt, 'the owner verified the address');
    assert.equal((await (await member()).visitor.post('/settings/email', { email: victim })).status, 429, 'any other browser is still refused');
  });

  test('a verification mail\'s "Not you?" link takes the address off the account that asked, only by its form\'s POST', async () => {
    const { user, visitor, email } = await verifiedMember();
    const next = address();
    await visitor.post('/settings/email', { email: next });
    await deliver();
    const notMine = relative(linkIn(t.smtp.to(next)[0], '/email/not-mine'));
    const verify = relative(linkIn(t.smtp.to(next)[0], '/email/verify'));
    const reader = new Visitor(t.baseUrl);
    assert.equal((await reader.get(notMine)).status, 200);
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.pending, next, 'opening the link changes nothing (a mail scanner opens links)');
    const token = new URL(notMine, t.baseUrl).searchParams.get('token')!;
    assert.equal((await reader.post('/email/not-mine', { token }, { csrf: null })).status, 403, 'the form needs its CSRF field');
    assert.equal((await reader.post('/email/not-mine', { token })).status, 200);
    const kept = await t.deps.stores.memberEmails.find(user.id);
    assert.deepEqual([kept?.address, kept?.pending], [email, null], 'the verified address stays, the change is gone');
    assert.equal((await reader.get(verify)).status, 400, 'its verification link is worthless');
    assert.equal((await reader.post('/email/not-mine', { token: 'nothing' })).status, 400);
    assert.ok((await visitor.get('/settings/security')).text.includes('refused by whoever reads the address'), 'the account\'s security log says so');
  });

  test('a "Not you?" link opened or sent again once refused says it was refused already, and takes nothing off the account again', async () => {
    const { user, visitor, email, link: notMine } = await memberMailed('/email/not-mine');
    const token = new URL(notMine, t.baseUrl).searchParams.get('token')!;
    const reader = new Visitor(t.baseUrl);
    assert.equal((await reader.post('/email/not-mine', { token })).status, 200);
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, 'refused: the account lost the address');
    // The account asks for the address again; its reader opens the first mail again.
    assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    const refusedWords = (locale: 'en' | 'zh-CN') => t.deps.words(locale).text('recovery.refuseAlready');
    reader.cookies.set('lang', 'zh-CN');
    const opened = await reader.get(notMine);
    assert.equal(opened.status, 200);
    assert.ok(opened.text.includes(refusedWords('zh-CN')), 'the page says it was refused already, in the reader\'s language');
    assert.ok(!opened.text.includes('name="token"'), 'no form to refuse it again');
    const sentAgain = await reader.post('/email/not-mine', { token });
    assert.equal(sentAgain.status, 200);
    assert.ok(sentAgain.text.includes(refusedWords('zh-CN')), 'the form sent again says so too');
    assert.equal((await t.deps.stores.memberEmails.find(user.id))?.address, email, 'the account keeps the address it asked for anew');
    const refusals = (await t.deps.stores.securityEvents.listForUser(user.id, 0, 50)).items.filter((e) => e.kind === 'email.refused');
    assert.equal(refusals.length, 1, 'one refusal in the account\'s security log');
  });

  test('a "Not you?" form sent again once refused is told from a link not valid by one read of the link, no second look-up of it and its account', async () => {
    const { user, link: notMine } = await memberMailed('/email/not-mine');
    const token = new URL(notMine, t.baseUrl).searchParams.get('token')!;
    const reader = new Visitor(t.baseUrl);
    assert.equal((await reader.post('/email/not-mine', { token })).status, 200);
    const findLink = KyselyMemberEmailStore.prototype.findLink;
    const findById = KyselyUserStore.prototype.findById;
    let reads = 0;
    KyselyMemberEmailStore.prototype.findLink = function (this: KyselyMemberEmailStore, ...args) { if (args[0] === hashSecret(token)) reads++; return findLink.apply(this, args); };
    KyselyUserStore.prototype.findById = function (this: KyselyUserStore, ...args) { if (args[0] === user.id) reads++; return findById.apply(this, args); };
    try {
      const sentAgain = await reader.post('/email/not-mine', { token });
      assert.equal(sentAgain.status, 200);
      assert.ok(sentAgain.text.includes(t.deps.words('en').text('recovery.refuseAlready')), 'it says the link was refused already');
      assert.equal(reads, 1, 'one read of the link, none of its account');
    } finally {
      KyselyMemberEmailStore.prototype.findLink = findLink;
      KyselyUserStore.prototype.findById = findById;
    }
    assert.equal((await reader.post('/email/not-mine', { token: 'nothing' })).status, 400, 'a token no link has is not valid');
    t.clock.advance(VERIFY_LINK_MS);
    assert.equal((await reader.post('/email/not-mine', { token })).status, 400, 'a link refused and since expired is not valid');
  });

  test('the language picker on a "Not you?" answer goes where the page leads on, the e-mail settings, not to the link without its token', async () => {
    const { visitor } = await member();
    const email = address();
    await visitor.post('/settings/email', { email });
    await deliver();
    const token = new URL(linkIn(t.smtp.to(email)[0], '/email/not-mine')).searchParams.get('token')!;
    // The reader of the address, signed in to an account of their own.
    const reader = (await member()).visitor;
    const done = await reader.post('/email/not-mine', { token });
    assert.equal(done.status, 200);
    const next = await reader.get(await languagePicked(reader, done));
    assert.equal(next.status, 200, 'not "this link has been used, has expired or is not valid"');
    assert.match(next.text, /name="email"/, 'the e-mail settings, where the page says to save the address');
  });

  test('an address that is not one is refused with the field named', async () => {
    const { visitor } = await member();
    for (const email of ['not an address', `${'a'.repeat(1001)}@example.test`]) {
      const refused = await visitor.post('/settings/email', { email });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /aria-invalid="true"/);
    }
  });

  test('an address too long to read as one of 254 characters is refused before NFKC reads it, and one NFKC composes under 254 is read', async () => {
    const { user, visitor } = await member();
    // Marks of two combining classes in turn, which NFKC's canonical reordering sorts in time growing
    // with the square of their number: 64 KB of them held the server 0.6 s. Past the bound by one unit.
    const domain = '@example.test';
    const typed = `a${'\u0316\u0301'.repeat(4 * EMAIL_MAX_LENGTH).slice(0, 8 * EMAIL_MAX_LENGTH - domain.length)}${domain}`;
    let refused = { status: 0, text: '' };
    assert.equal(await normalizes(typed, async () => { refused = await visitor.post('/settings/email', { email: typed }); }), false, 'NFKC did not read it');
    assert.equal(refused.status, 400);
    assert.ok(refused.text.includes(t.deps.words('en').text('recovery.emailInvalid')));
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, 'nothing saved');
    // U+1F82 composed from the four code points of its decomposition, the longest: 4 × 100 units read as 100 characters.
    const composed = `${'\u1f82'.repeat(100)}@example.test`;
    assert.equal(checkEmailAddress(` ${composed.normalize('NFD')} `), composed);
  });

  test('an address typed partly or wholly in full-width characters, or with a Chinese full stop in its domain, is saved and mailed as the address it reads as after NFKC, as IDNA reads a domain', async () => {
    const name = `w${randomBytes(5).toString('hex')}`;
    for (const [typed, reads] of [
      [`${name}1@${fullWidth('example')}.test`, `${name}1@example.test`],
      [fullWidth(`${name}2@example.test`), `${name}2@example.test`],
      [`${name}3@example\u3002test`, `${name}3@example.test`],
    ] as const) {
      const { user, visitor } = await member();
      const saved = await visitor.post('/settings/email', { email: typed });
      assert.equal(saved.status, 200, typed);
      assert.equal((await t.deps.stores.memberEmails.find(user.id))?.address, reads, 'stored as it reads, where its mail goes');
      assert.ok(saved.text.includes(reads), 'the page names the address the mail went to');
      await deliver();
      assert.ok(t.smtp.to(reads).some((m) => m.text.includes('/email/verify?token=')), `the link was mailed to ${reads}`);
    }
  });

  test('an address with an invisible character in it (soft hyphen, zero-width space, word joiner, a direction mark) is refused: it looks like another address and is not the one meant', async () => {
    const { user, visitor } = await member();
    for (const invisible of ['\u00ad', '\u200b', '\u2060', '\u200e']) {
      const typed = `name@exa${invisible}mple.test`;
      const refused = await visitor.post('/settings/email', { email: typed });
      assert.equal(refused.status, 400, JSON.stringify(typed));
      assert.ok(refused.text.includes(t.deps.words('en').text('recovery.emailInvalid')), JSON.stringify(typed));
    }
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, 'nothing saved');
    await deliver();
    assert.equal(t.smtp.to('name@exa\u00admple.test').length + t.smtp.to('name@example.test').length, 0, 'nothing mailed');
  });

  test('an address whose domain has an empty label (two dots in a row, a dot first) is refused: no mail server takes it, and the outbox would try it for a day; a final dot, the root\'s, is kept', async () => {
    const { user, visitor } = await member();
    for (const typed of ['name@ex..ample.test', 'name@.example.test', 'name@example..test.']) {
      const refused = await visitor.post('/settings/email', { email: typed });
      assert.equal(refused.status, 400, typed);
      assert.ok(refused.text.includes(t.deps.words('en').text('recovery.emailInvalid')), typed);
    }
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, 'nothing saved');
    assert.equal(checkEmailAddress('name@example.test.'), 'name@example.test.');
  });

  test('an address whose domain has a label begun by a combining mark (RFC 5891 4.2.3.2: a variation selector alone is an empty label to IDNA) is refused; marks within a label are kept', async () => {
    const { user, visitor } = await member();
    for (const typed of ['name@ex.\uFE0F.test', 'name@\u0301example.test', 'name@example.\u034Ftest']) {
      const refused = await visitor.post('/settings/email', { email: typed });
      assert.equal(refused.status, 400, JSON.stringify(typed));
      assert.ok(refused.text.includes(t.deps.words('en').text('recovery.emailInvalid')), JSON.stringify(typed));
    }
    assert.equal(await t.deps.stores.memberEmails.find(user.id), undefined, 'nothing saved');
    assert.equal(checkEmailAddress('name@cafe\u0301.test'), 'name@caf\u00e9.test');
    assert.equal(checkEmailAddress('name@हिन्दी.test'), 'name@हिन्दी.test');
  });

  test('the sign-in page links "Forgot password?" to the forgotten-password page', async () => {
    const page = await new Visitor(t.baseUrl).get('/login');
    assert.match(page.text, /<a href="\/password\/forgot">Forgot password\?<\/a>/);
    assert.equal((await new Visitor(t.baseUrl).get('/password/forgot')).status, 200);
  });

  test('a forgotten-password request answers the same for an unknown account', async () => {
    const { user, email } = await verifiedMember();
    const visitor = new AddressedVisitor(t.baseUrl);
    const known = await forgot(user.username, visitor);
    const unknown = await forgot(`nobody${randomBytes(4).toString('hex')}`, visitor);
    const unknownAddress = await forgot(address(), visitor);
    const knownAddress = await forgot(email.toUpperCase(), visitor);
    for (const page of [unknown, unknownAddress, knownAddress]) {
      assert.equal(page.status, known.status);
      assert.equal(comparable(page), comparable(known));
    }
    assert.equal(t.smtp.to(email).filter((m) => m.text.includes('/password/reset?token=')).length, 2, 'by username and by address');
  });

  test('a forgotten-password request takes as long for an unknown account as for a known one', async () => {
    const { user, email } = await verifiedMember();
    const visitor = new AddressedVisitor(t.baseUrl);
    const csrf = await visitor.csrf();
    const client = await TimingClient.start();
    const timed = async (login: string) => {
      // A new hour each time, so no limit cuts either path short, and what the one before left
      // running is done before the next is timed. The mails wait: sending them would take the
      // CPU of this process (the SMTP server's) while the next is timed.
      t.clock.advance(RESET_WINDOW_SECONDS * 1000);
      await t.deps.background.settled();
      await setTimeout(20);
      const answer = await client.time({
        url: `${t.baseUrl}/password/forgot`, method: 'POST', body: new URLSearchParams({ _csrf: csrf, login }).toString(),
        headers: { ...visitor.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': visitor.address },
      });
      assert.equal(answer.status, 200);
      return answer.ms;
    };
    const median = (ms: number[]) => ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    try {
      await timed(user.username);
      // In turns K U U K K U…, so each follows either as often: what a known one leaves behind
      // (its mail written, a checkpoint) weighs on both alike.
      for (let i = 0; i < 80; i += 1) {
        const pair = [async () => known.push(await timed(user.username)), async () => unknown.push(await timed(`nobody${randomBytes(4).toString('hex')}`))];
        for (const next of i % 2 === 0 ? pair : pair.reverse()) await next();
      }
    } finally {
      client.stop();
    }
    while ((await deliver()).claimed > 0);
    assert.equal(t.smtp.to(email).filter((m) => m.text.includes('/password/reset?token=')).length, 81, 'the known account was mailed each time: a mail not tried yet is never replaced');
    const [k, u] = [median(known), median(unknown)];
    // Generous for a loaded machine's noise; the mail written before answering took twice as long.
    assert.ok(Math.max(k, u) < 1.5 * Math.min(k, u), `median ${k.toFixed(2)} ms for a known account, ${u.toFixed(2)} ms for an unknown one`);
  });

  test('an account without a verified address gets no reset mail, and the answer is the same', async () => {
    const { user, visitor } = await member();
    const email = address();
    await visitor.post('/settings/email', { email });
    const page = await forgot(user.username);
    assert.equal(page.status, 200);
    assert.ok(t.smtp.to(email).every((m) => !m.text.includes('/password/reset')));
  });

  test('a reset link works once, sets the password and ends every session', async () => {
    const { user, visitor, email } = await verifiedMember();
    const other = new AddressedVisitor(t.baseUrl);
    await other.signIn(user.username, PASSWORD);
    const link = await resetLink(user, email);
    const form = await new AddressedVisitor(t.baseUrl).get(relative(link));
    assert.equal(form.status, 200);
    assert.match(form.text, /name="password"/);
    assert.doesNotMatch(form.text, /name="code"/, 'no second step without two-step');
    assert.equal((await reset(link)).status, 200);
    for (const browser of [visitor, other]) assert.equal((await browser.get('/settings/email')).status, 303, 'signed out');
    assert.equal((await new AddressedVisitor(t.baseUrl).post('/login', { username: user.username, password: PASSWORD, return_to: '/' })).status, 401);
    await new AddressedVisitor(t.baseUrl).signIn(user.username, NEW_PASSWORD);
    const again = await reset(link, { password: 'yet another passphrase' });
    assert.equal(again.status, 400, 'used once');
    await new AddressedVisitor(t.baseUrl).signIn(user.username, NEW_PASSWORD);
    const events = await t.deps.stores.securityEvents.listForUser(user.id, 0, 50);
    assert.ok(events.items.some((e) => e.kind === 'password.reset'));
    await deliver();
    assert.ok(t.smtp.to(email).some((m) => /password was reset/.test(m.subject)), 'a notice');
  });

  test('the reset page offers to show the new password, by the sign-up page\'s script, hidden without it', async () => {
    const { user, email } = await verifiedMember();
    const form = (await new AddressedVisitor(t.baseUrl).get(relative(await resetLink(user, email)))).text;
    assert.match(form, /<div class="check" hidden><input type="checkbox" id="show-password" data-show-password="password">/);
    assert.match(form, /<script src="\/static\/show-password.js" defer><\/script>/);
    const used = (await new AddressedVisitor(t.baseUrl).get('/password/reset?token=nope')).text;
    assert.doesNotMatch(used, /show-password/, 'no form, no switch');
  });

  test('a used, expired or unknown reset link shows the form again with 400 and changes nothing', async () => {
    const { user, email } = await verifiedMember();
    const link = await resetLink(user, email);
    t.clock.advance(RESET_LINK_MS + 1000);
    assert.equal((await new Visitor(t.baseUrl).get(relative(link))).status, 400);
    const expired = await reset(link);
    assert.equal(expired.status, 400);
    assert.match(expired.text, /has expired/);
    assert.equal((await reset(`${t.baseUrl}/password/reset?token=unknown`)).status, 400);
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
  });

  test('a login too long to be any account\'s is sent back on the forgotten-password form as typed, with the field named, in the reader\'s language', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const english = await visitor.post('/password/forgot', { login: 'a'.repeat(1001) });
    assert.equal(english.status, 400);
    assert.match(english.text, /<form method="post" action="\/password\/forgot">/);
    assert.match(english.text, /<input [^>]*id="login"[^>]*aria-invalid="true"/);
    assert.match(english.text, new RegExp(`<input [^>]*id="login" [^>]*value="${'a'.repeat(1001)}"`), 'what was typed, to be mended');
    assert.match(english.text, /<p class="field-error" id="login-error">No username or e-mail address is that long: at most 1,?000 characters\.<\/p>/);
    const chinese = await visitor.request('/password/forgot', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'zh-CN' },
      body: new URLSearchParams({ _csrf: await visitor.csrf(), login: 'a'.repeat(1001) }).toString(),
    });
    assert.equal(chinese.status, 400);
    assert.match(chinese.text, /<p class="field-error" id="login-error">用户名或邮箱不会这么长：最多 1,?000 个字符。<\/p>/);
    assert.equal((await forgot('a'.repeat(1000), visitor)).status, 200, 'up to the cap, the usual answer');
  });

  test('a reset or verification token too long to be any link\'s is that page\'s "not valid" answer, not a generic error page', async () => {
    const token = 'x'.repeat(201);
    const posted = await new AddressedVisitor(t.baseUrl).post('/password/reset', { token, password: NEW_PASSWORD });
    const opened = await new Visitor(t.baseUrl).get(`/password/reset?token=${token}`);
    for (const page of [posted, opened]) {
      assert.equal(page.status, 400);
      assert.match(page.text, /This link has been used, has expired or is not valid\./);
      assert.match(page.text, /<a href="\/password\/forgot">/);
    }
    const verify = await new Visitor(t.baseUrl).get(`/email/verify?token=${token}`);
    assert.equal(verify.status, 400);
    assert.match(verify.text, /This verification link has been used, has expired or is not valid\./);
  });

  test('a change on the security page whose security-log line cannot be written is still mailed to the member: the notice is no part of the line', async () => {
    const { user, visitor, email } = await verifiedMember();
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    const turnedOn = await whileInsertsFail(t.deps.database.db, database, 'security_events',
      () => visitor.post('/settings/security', { action: 'totp-confirm', code: totpCode(enrolment.secret, t.clock.now()) }));
    assert.equal(turnedOn.status, 200, 'the change is answered as made');
    assert.deepEqual((await t.deps.stores.securityEvents.listForUser(user.id, 0, 10)).items.filter((e) => e.kind === 'totp.enabled'), [], 'no line was written');
    await deliver();
    assert.match(t.smtp.to(email).at(-1)?.subject ?? '', /^Two-step verification is on for your .* account$/, 'the member is told');
  });

  test('a reset needs the second step when two-step is on', async () => {
    const { user, email } = await verifiedMember();
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    const [recoveryCode] = await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    const link = await resetLink(user, email);
    assert.match((await new Visitor(t.baseUrl).get(relative(link))).text, /name="code"/);
    assert.equal((await reset(link)).status, 400, 'no code');
    assert.equal((await reset(link, { code: '000000' })).status, 400, 'a wrong code');
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    assert.equal((await reset(link, { code: recoveryCode! })).status, 200, 'a recovery code serves');
    const fresh = new AddressedVisitor(t.baseUrl);
    assert.equal((await fresh.post('/login', { username: user.username, password: NEW_PASSWORD, return_to: '/' })).status, 303);
  });

  test('a reset refused because the password hash queue is full spends no recovery code and changes nothing', async () => {
    const { user, email } = await verifiedMember();
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    const [recoveryCode] = await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    const link = await resetLink(user, email);
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const holders = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING }, () => passwordHashQueue.run(() => held));
    let refused: PageResponse;
    try {
      refused = await reset(link, { code: recoveryCode! });
    } finally {
      release();
      await Promise.all(holders);
    }
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    assert.equal((await reset(link, { code: recoveryCode! })).status, 200, 'the same link and recovery code serve once the queue drains');
  });

  test('a reset whose second step is throttled hashes no password: with the hash queue full it is still 429, not 503', async () => {
    // Hashing before the counters were looked at let anyone holding a link of a two-step account
    // make argon2 computations without end, each refused 429 only after its hash: a line of
    // uncounted work in front of everyone's sign-in.
    const { user, email } = await verifiedMember();
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    const link = await resetLink(user, email);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT; i++) assert.equal((await reset(link, { code: '000000' })).status, 400, 'a wrong code');
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const holders = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING }, () => passwordHashQueue.run(() => held));
    let refused: PageResponse;
    try {
      refused = await reset(link, { code: '000000' });
    } finally {
      release();
      await Promise.all(holders);
    }
    assert.equal(refused.status, 429, 'throttled before any hash');
  });

  test('a reset keeps the password rules of sign-up', async () => {
    const { user, email } = await verifiedMember();
    const link = await resetLink(user, email);
    for (const password of ['short', user.username, 'password123']) {
      assert.equal((await reset(link, { password })).status, 400, password);
    }
    assert.equal((await reset(link)).status, 200, 'the link still works');
  });

  test('the language picker on a reset answer goes where the link leads on: the form again while the link works, sign-in once it is spent', async () => {
    const { user, email } = await verifiedMember();
    const link = await resetLink(user, email);
    const token = new URL(link).searchParams.get('token')!;
    const browser = new AddressedVisitor(t.baseUrl);
    const pickLanguage = async (page: PageResponse) => browser.get(await languagePicked(browser, page));
    const refused = await browser.post('/password/reset', { token, password: 'short' });
    assert.equal(refused.status, 400);
    const again = await pickLanguage(refused);
    assert.equal(again.status, 200, 'the form, not "the link is used, expired or invalid"');
    assert.match(again.text, /name="password"/);
    const done = await browser.post('/password/reset', { token, password: NEW_PASSWORD });
    assert.equal(done.status, 200);
    const next = await pickLanguage(done);
    assert.equal(next.status, 200);
    assert.match(next.text, /<form method="post" action="\/login">/, 'the sign-in the page asks for');
  });

  test('a forgotten-password request naming the username in full-width letters, as a Chinese input method in full-width mode types it, mails the link', async () => {
    const { user, email } = await verifiedMember();
    const typed = fullWidth(user.username);
    assert.equal((await forgot(typed)).status, 200);
    assert.ok(t.smtp.to(email).some((m) => m.text.includes('/password/reset?token=')), 'the link was mailed, as sign-in reads that username');
  });

  test('a forgotten-password request naming the verified address in full-width characters, as a Chinese input method in full-width mode types it, mails the link', async () => {
    const { email } = await verifiedMember();
    const typed = fullWidth(email);
    assert.ok(!typed.includes('@'), 'the full-width ＠');
    assert.equal((await forgot(typed)).status, 200);
    assert.ok(t.smtp.to(email).some((m) => m.text.includes('/password/reset?token=')), 'the link was mailed, as the address reads after NFKC');
  });

  test('at most 5 reset mails per account an hour', async () => {
    const { user, email } = await verifiedMember();
    for (let i = 0; i < RESET_MAILS_PER_ACCOUNT + 2; i += 1) assert.equal((await forgot(user.username)).status, 200);
    assert.equal(t.smtp.to(email).filter((m) => m.text.includes('/password/reset?token=')).length, RESET_MAILS_PER_ACCOUNT);
  });

  test('at most 5 verification mails per account an hour and 3 per address a day, then 429 with Retry-After', async () => {
    const { visitor } = await member();
    for (let i = 0; i < VERIFY_MAILS_PER_ACCOUNT; i += 1) assert.equal((await visitor.post('/settings/email', { email: address() })).status, 200);
    const refused = await visitor.post('/settings/email', { email: address() });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);

    const victim = address();
    for (let i = 0; i < VERIFY_MAILS_PER_ADDRESS; i += 1) assert.equal((await (await member()).visitor.post('/settings/email', { email: victim })).status, 200);
    assert.equal((await (await member()).visitor.post('/settings/email', { email: victim.toUpperCase() })).status, 429, 'whatever account asks');
    await deliver();
    assert.equal(t.smtp.to(victim).length, VERIFY_MAILS_PER_ADDRESS);
  });

  test('a verification mail greets by username and links only the site\'s own address, never a nickname shaped like one', async () => {
    const { user, visitor } = await member();
    await updateProfile(t.deps.stores, t.clock, user.id, { nickname: 'https://evil.example/unlock' });
    const email = address();
    await visitor.post('/settings/email', { email });
    await deliver();
    const mail = t.smtp.to(email).at(-1)!;
    assert.doesNotMatch(mail.text, /evil\.example/);
    assert.match(mail.text, new RegExp(`\\b${user.username}\\b`));
    const links = [...(mail.html ?? '').matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length > 0 && links.every((href) => href.startsWith(`${t.baseUrl}/`)), links.join(' '));
  });

  test('at most 20 forgotten-password requests per address an hour, then 429 with Retry-After', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    for (let i = 0; i < RESET_REQUESTS_PER_ADDRESS; i += 1) assert.equal((await visitor.post('/password/forgot', { login: `x${i}` })).status, 200);
    const refused = await visitor.post('/password/forgot', { login: 'x' });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal((await new AddressedVisitor(t.baseUrl).post('/password/forgot', { login: 'x' })).status, 200, 'another address goes on');
  });

  test('a refused forgotten-password request says how long to wait in seconds under a minute, as every throttled form does', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    // The limit's windows start at multiples of its length: begin at one, so the wait is the whole window.
    const windowMs = RESET_WINDOW_SECONDS * 1000;
    t.clock.advance(windowMs - (t.clock.now() % windowMs));
    for (let i = 0; i < RESET_REQUESTS_PER_ADDRESS; i += 1) await visitor.post('/password/forgot', { login: `y${i}` });
    const refused = await visitor.post('/password/forgot', { login: 'y' });
    // The whole window, an hour: said in hours, as every wait of an hour or more is.
    assert.match(refused.text, /Try again in 1 hour\./);
    t.clock.advance((Number(refused.headers.get('retry-after')) - 30) * 1000);
    const soon = await visitor.post('/password/forgot', { login: 'y' });
    assert.equal(soon.status, 429);
    assert.match(soon.text, /Try again in 30 seconds\./);
    assert.match(soon.text, /role="alert" id="form-error"/);
  });

  test('a sign-in from a browser without the account\'s device cookie is mailed; one from a known browser is not', async () => {
    const { user, visitor, email } = await verifiedMember();
    await deliver();
    const before = t.smtp.to(email).length;
    await visitor.signIn(user.username, PASSWORD);
    await deliver();
    assert.equal(t.smtp.to(email).length, before, 'the browser signed in before');
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    await deliver();
    const notice = t.smtp.to(email).at(-1)!;
    assert.match(notice.subject, /New sign-in/);
  });

  test('a sign-in from a new browser whose notice mail cannot be queued still signs the member in: the notice is no part of the sign-in', async () => {
    const { user } = await verifiedMember();
    const visitor = new AddressedVisitor(t.baseUrl);
    const signedIn = await whileInsertsFail(t.deps.database.db, database, 'mail_outbox', () => visitor.post('/login', { username: user.username, password: PASSWORD, return_to: '/' }));
    assert.equal(signedIn.status, 303, 'the sign-in is answered as made');
    assert.equal((await visitor.get('/settings/profile')).status, 200, 'and the browser is signed in');
    assert.ok((await t.deps.stores.securityEvents.listForUser(user.id, 0, 10)).items.some((e) => e.kind === 'sign_in.succeeded' && e.detail.new_browser === 'yes'), 'its line is in the log');
  });

  test('a new browser\'s sign-in notice asks to turn two-step verification on only of an account that has it off', async () => {
    const { user, email } = await verifiedMember();
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    await deliver();
    assert.match(t.smtp.to(email).at(-1)!.text, /change your password at once and turn on two-step verification/);
    const enrolment = await beginTotpEnrolment(t.deps, user);
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment!.secret, t.clock.now()));
    t.clock.advance(30_000);
    const browser = new AddressedVisitor(t.baseUrl);
    assert.equal((await browser.post('/login', { username: user.username, password: PASSWORD, return_to: '/' })).location, '/login/second-step');
    assert.equal((await browser.post('/login/second-step', { code: totpCode(enrolment!.secret, t.clock.now()) })).status, 303);
    await deliver();
    const notice = t.smtp.to(email).at(-1)!;
    assert.match(notice.subject, /New sign-in/);
    assert.match(notice.text, /someone passed your two-step verification too: change your password at once, sign out everywhere else/);
    assert.doesNotMatch(notice.text, /turn on two-step/, 'it is on (attack86)');
  });

  test('a notice to a member who saved no language goes out in the language of the page the event came from', async () => {
    const { user, email } = await verifiedMember();
    const browser = new AddressedVisitor(t.baseUrl);
    browser.cookies.set('lang', 'zh-TW');
    await browser.signIn(user.username, PASSWORD);
    await deliver();
    const notice = t.smtp.to(email).at(-1)!;
    assert.match(notice.subject, /^你的.+帳號有新的登入$/);
    assert.match(notice.text, /瀏覽器：腳本程式/, 'the device in the mail\'s language, as the pages write it');
    assert.doesNotMatch(notice.text, /a script/);
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    await deliver();
    assert.match(t.smtp.to(email).at(-1)!.subject, /^New sign-in/, 'a browser that asks for no language: the site\'s default');
  });

  test('the first authorization of an app is mailed in the language of the consent page the member read', async () => {
    const { visitor, email } = await verifiedMember();
    visitor.cookies.set('lang', 'zh-CN');
    const app = await newClient(t, { type: 'public' });
    const page = await visitor.get(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair() })}`);
    assert.equal(page.status, 200, 'the consent page');
    const fields = Object.fromEntries(consentForm(page.text).filter(([name]) => name !== '_csrf'));
    assert.equal((await visitor.post('/oauth/authorize', { ...fields, decision: 'approve' })).status, 302);
    await deliver();
    const notice = t.smtp.to(email).at(-1)!;
    assert.match(notice.subject, /^Test App 已获得你的.+账号授权$/, 'not in English (attack86)');
  });

  test('the notice of an app\'s first authorization links where its access is withdrawn, and that of a new personal token where it is revoked, beside the password\'s page', async () => {
    const { visitor, email } = await verifiedMember();
    const app = await newClient(t, { type: 'public' });
    const page = await visitor.get(`/oauth/authorize?${authorizeQuery(app, { pkce: pkcePair() })}`);
    const fields = Object.fromEntries(consentForm(page.text).filter(([name]) => name !== '_csrf'));
    assert.equal((await visitor.post('/oauth/authorize', { ...fields, decision: 'approve' })).status, 302);
    await deliver();
    const authorized = t.smtp.to(email).at(-1)!;
    assert.match(authorized.subject, /^Test App /);
    assert.match(authorized.text, new RegExp(`Withdraw its access: ${t.baseUrl}/settings/applications\\n`));
    assert.match(authorized.text, new RegExp(`Change your password: ${t.baseUrl}/settings/security`));
    const created = await visitor.post('/settings/tokens', { name: 'backup', scopes: 'profile:read', expires_in_days: '30', password: PASSWORD });
    assert.equal(created.status, 303);
    await deliver();
    const token = t.smtp.to(email).at(-1)!;
    assert.match(token.text, /personal API token “backup”/);
    assert.match(token.text, new RegExp(`Revoke the token: ${t.baseUrl}/settings/tokens\\n`));
    assert.match(token.text, new RegExp(`Change your password: ${t.baseUrl}/settings/security`));
  });

  test('an app\'s new client secret and changed redirect URIs are mailed to its owner, with a link to the app\'s page', async () => {
    const { user, visitor, email } = await verifiedMember();
    assert.equal((await visitor.post('/settings/developers', { name: 'Harbour Reader', redirect_uris: 'https://harbour.example/cb', type: 'confidential' })).status, 303);
    const [client] = await t.deps.stores.clients.listByOwner(user.id);
    const appPage = `${t.baseUrl}/settings/developers/${client!.clientId}`;
    assert.equal((await visitor.post(`/settings/developers/${client!.clientId}/rotate-secret`, { confirm: 'yes' })).status, 303);
    await deliver();
    const rotated = t.smtp.to(email).at(-1)!;
    assert.match(rotated.subject, /^A new client secret was made for Harbour Reader on /);
    assert.ok(rotated.text.includes(appPage), 'the app\'s page');
    assert.equal((await visitor.post(`/settings/developers/${client!.clientId}/redirect-uris`, { redirect_uris: 'https://harbour.example/cb' })).status, 303);
    await deliver();
    assert.equal(t.smtp.to(email).at(-1), rotated, 'the same addresses saved again change nothing and tell nothing');
    assert.equal((await visitor.post(`/settings/developers/${client!.clientId}/redirect-uris`, { redirect_uris: 'https://elsewhere.example/cb' })).status, 303);
    await deliver();
    const changed = t.smtp.to(email).at(-1)!;
    assert.match(changed.subject, /^The redirect URIs of Harbour Reader on .+ were changed$/);
    assert.ok(changed.text.includes(appPage));
  });

  test('a personal token or a client secret reported exposed is mailed to its holder, with what to do now, in their language; an app\'s access token is not', async () => {
    const report = (credentials: string[]) => fetch(`${t.baseUrl}/api/credentials/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': new AddressedVisitor(t.baseUrl).address }, body: JSON.stringify({ credentials }),
    });
    const { user, email } = await verifiedMember();
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'deploy script', scopes: ['profile:read'], expiresInDays: 30 });
    const { client, secret } = await registerClient(t.deps.stores, t.clock, { name: 'Harbour Reader', type: 'confidential', redirectUris: ['https://harbour.example/cb'], ownerId: user.id });
    await deliver();
    const before = t.smtp.to(email).length;
    assert.equal((await report([token, secret!])).status, 202);
    await deliver();
    const mailed = t.smtp.to(email).slice(before);
    assert.equal(mailed.length, 2);
    const tokenMail = mailed.find((m) => /personal API token/.test(m.subject))!;
    assert.match(tokenMail.subject, /^A personal API token of your .+ account was found exposed and revoked$/);
    assert.match(tokenMail.text, /“deploy script”[\s\S]*revoked: it works no more/);
    assert.ok(tokenMail.text.includes(`${t.baseUrl}/settings/tokens`), 'where to make a new one');
    const appMail = mailed.find((m) => /Harbour Reader/.test(m.subject))!;
    assert.match(appMail.subject, /^Harbour Reader on .+ was deactivated: its client secret was found exposed$/);
    assert.match(appMail.text, /cannot be turned on again[\s\S]*register a new application/);
    assert.ok(appMail.text.includes(`${t.baseUrl}/settings/developers\n`), 'where to register one');
    assert.ok(appMail.text.includes(`${t.baseUrl}/settings/developers/${client.clientId}`), 'the app\'s page');

    const reader = await verifiedMember();
    await updateProfile(t.deps.stores, t.clock, reader.user.id, { language: 'zh-CN' });
    const { token: readerToken } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: reader.user.id, name: '备份脚本', scopes: ['profile:read'], expiresInDays: 30 });
    await deliver();
    const readerBefore = t.smtp.to(reader.email).length;
    assert.equal((await report([readerToken])).status, 202);
    await deliver();
    const chinese = t.smtp.to(reader.email).slice(readerBefore);
    assert.equal(chinese.length, 1);
    assert.match(chinese[0]!.subject, /^你的.+账号有个人 API 令牌被发现公开泄露，已撤销$/);
    assert.match(chinese[0]!.text, /“备份脚本”/);

    // An app's access token issued for the member: the app's owner fixes that leak, and the member
    // holds nothing to replace. Their log says so; no mail.
    const now = t.clock.now();
    const { client: app } = await registerClient(t.deps.stores, t.clock, { name: 'Tide Tables', type: 'public', redirectUris: ['https://tides.example/cb'] });
    const grant = await t.deps.stores.grants.create({ userId: user.id, clientId: app.clientId, scope: 'profile:read', nonce: null, authTime: now }, now);
    const access = generateToken('access');
    await t.deps.stores.tokens.insertAccess({ tokenHash: hashSecret(access), grantId: grant.id, clientId: app.clientId, userId: user.id, scope: 'profile:read', createdAt: now, expiresAt: now + 3_600_000 });
    assert.equal((await report([access])).status, 202);
    await deliver();
    assert.equal(t.smtp.to(email).length, before + 2, 'no mail');
    assert.ok((await t.deps.stores.securityEvents.listForUser(user.id, 0, 10)).items.some((e) => e.kind === 'access_token.revoked_as_leaked'), 'a line in the log');
  });

  test('a notice no page caused goes out, for a member who saved no language, in the language of the page they gave their address on', async () => {
    const { user, visitor } = await member();
    visitor.cookies.set('lang', 'zh-TW');
    const email = address();
    assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    await deliver();
    assert.equal((await new AddressedVisitor(t.baseUrl).get(relative(linkIn(t.smtp.to(email).at(-1), '/email/verify')))).status, 200, 'verified from a browser that asks for no language');
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: '部署腳本', scopes: ['profile:read'], expiresInDays: 30 });
    await deliver();
    const before = t.smtp.to(email).length;
    const report = await fetch(`${t.baseUrl}/api/credentials/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': new AddressedVisitor(t.baseUrl).address }, body: JSON.stringify({ credentials: [token] }),
    });
    assert.equal(report.status, 202);
    await deliver();
    const mailed = t.smtp.to(email).slice(before);
    assert.equal(mailed.length, 1);
    assert.match(mailed[0]!.subject, /個人 API 權杖/, 'in Traditional Chinese, not the site\'s default');
    assert.equal(mailed[0]!.parsed.headers.get('content-language'), 'zh-TW');
  });

  test('a leak report whose notice cannot be queued is answered 202 all the same: the credential is revoked, and the notice is no part of the report', async () => {
    const { user } = await verifiedMember();
    const { token } = await createPersonalToken(t.deps.stores, t.clock, t.deps.tokenMarks, { userId: user.id, name: 'ci token', scopes: ['profile:read'], expiresInDays: 30 });
    const reported = await whileInsertsFail(t.deps.database.db, database, 'mail_outbox', () => fetch(`${t.baseUrl}/api/credentials/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': new AddressedVisitor(t.baseUrl).address }, body: JSON.stringify({ credentials: [token] }),
    }));
    assert.equal(reported.status, 202);
    assert.equal((await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status, 401, 'revoked');
    assert.ok(t.audit.some((e) => e.audit === 'credential.revoked_as_leaked' && e.userId === user.id), 'its audit line');
  });

  test('a notice goes out in the member\'s saved language, and its HTML says so', async () => {
    const { user, email } = await verifiedMember();
    await updateProfile(t.deps.stores, t.clock, user.id, { language: 'zh-TW' });
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    await deliver();
    assert.match(t.smtp.to(email).at(-1)!.subject, /^你的.+帳號有新的登入$/);
    assert.match(t.smtp.to(email).at(-1)!.html ?? '', /^<!doctype html>\n<html lang="zh-TW">/, 'its HTML names its language, for screen readers');
    await updateProfile(t.deps.stores, t.clock, user.id, { language: 'zh-CN' });
    const link = await resetLink(user, email);
    assert.match(t.smtp.to(email).at(-1)!.subject, /重置你的.*密码/);
    assert.ok(link);
  });

  test('a mail names its language in a Content-Language header (RFC 3282), the tag its HTML names', async () => {
    const { user, email } = await verifiedMember();
    await updateProfile(t.deps.stores, t.clock, user.id, { language: 'zh-CN' });
    await resetLink(user, email);
    const mail = t.smtp.to(email).at(-1)!;
    assert.match(mail.subject, /重置你的.*密码/);
    assert.equal(mail.parsed.headers.get('content-language'), 'zh-CN');
    assert.match(mail.html ?? '', /<html lang="zh-CN">/, 'the same tag as the HTML part');
    await updateProfile(t.deps.stores, t.clock, user.id, { language: 'zh-TW' });
    await new AddressedVisitor(t.baseUrl).signIn(user.username, PASSWORD);
    await deliver();
    assert.equal(t.smtp.to(email).at(-1)!.parsed.headers.get('content-language'), 'zh-TW');
  });

  test('a reset mail names the time its link ends, as stored, though the mail arrives hours later after an SMTP outage', async () => {
    const { user, email } = await verifiedMember();
    await t.smtp.stop();
    try {
      assert.equal((await forgot(user.username)).status, 200);
      assert.equal(t.smtp.to(email).filter((m) => m.text.includes('/password/reset?token=')).length, 0, 'the server is away');
      t.clock.advance(2 * 3600 * 1000);
    } finally {
      await t.smtp.listen();
    }
    t.clock.advance(MAIL_FIRST_RETRY_MS);
    await deliver();
    const mail = t.smtp.to(email).at(-1)!;
    assert.match(mail.text, /\/password\/reset\?token=/);
    const expires = await storedExpiry(user, 'reset_password');
    assert.ok(mail.text.includes(`for 30 minutes: until ${formatSiteTime(expires, 'Asia/Shanghai')}.`), mail.text);
    assert.match(mail.text, /UTC\+8\./, 'no zone saved: the site\'s');
    assert.ok(expires < t.clock.now(), 'already over when it arrived, and the mail lets the member see so');
  });

  test('a verification mail in Chinese names the time its link ends in the member\'s own time zone', async () => {
    const { user, visitor } = await member();
    await updateProfile(t.deps.stores, t.clock, user.id, { language: 'zh-CN', timeZone: 'Asia/Tokyo' });
    const email = address();
    assert.equal((await visitor.post('/settings/email', { email })).status, 200);
    await deliver();
    const mail = t.smtp.to(email).at(-1)!;
    assert.match(mail.subject, /^验证你在.+的邮箱$/);
    const expires = await storedExpiry(user, 'verify_email');
    const shown = formatSiteTime(expires, 'Asia/Tokyo');
    assert.match(shown, /UTC\+9$/);
    assert.ok(mail.text.includes(`有效期 24 小时，${shown} 后失效。`), mail.text);
  });

  test('without mail set up, the forgotten-password page says to ask the staff and the e-mail page has no form', async () => {
    const off = await startTestApp(database, { env: { BASE_URL: 'https://id.example.test', DEMO: '0' } });
    try {
      assert.equal(off.deps.mailer.enabled, false);
      const page = await new Visitor(off.baseUrl).get('/password/forgot');
      assert.equal(page.status, 200);
      assert.match(page.text, /no mail set up/);
      assert.doesNotMatch(page.text, /name="login"/);
    } finally {
      await off.close();
    }
  });

  test('a personal token created and two-step turned on are mailed to the verified address', async () => {
    const { user, email } = await verifiedMember();
    await t.deps.securityLog.record({ userId: user.id, kind: 'personal_token.created', detail: { name: 'ci' } });
    const enrolment = (await beginTotpEnrolment(t.deps, user))!;
    await confirmTotpEnrolment(t.deps, user, totpCode(enrolment.secret, t.clock.now()));
    await t.deps.securityLog.record({ userId: user.id, kind: 'totp.enabled' });
    await deliver();
    const subjects = t.smtp.to(email).map((m) => m.subject);
    assert.ok(subjects.some((s) => /personal API token/.test(s)));
    assert.ok(subjects.some((s) => /Two-step verification is on/.test(s)));
  });
});
