/**
 * A typed username is read after NFKC (full-width letters are the ASCII ones they read as), and
 * one too long to read as any username at all (`TYPED_USERNAME_MAX_LENGTH`) is refused before
 * NFKC reads it: a posted body holds up to 64 KB (`normalizes` watches NFKC for the name posted).
 * The pages' username fields take as much as the server reads.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TYPED_USERNAME_MAX_LENGTH, createAccount, findTypedAccount } from '../../src/core/accounts/accounts.js';
import { SIGN_IN_FAILURES_PER_ADDRESS } from '../../src/core/accounts/sign-in.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { normalizes } from '../support/normalizes.js';
import { AddressedVisitor } from './visitor.js';

const PASSWORD = 'a long enough password 7';

/** A username of 30 characters starting with `first`, and how it is typed in mathematical letters and digits of 2 UTF-16 units each (`TYPED_USERNAME_MAX_LENGTH`). */
function atTheBound(first: string): { name: string; typed: string } {
  const name = `${first}${randomBytes(4).toString('hex')}`.padEnd(30, 'x');
  const typed = [...name].map((c) => /[a-z]/.test(c) ? String.fromCodePoint(0x1D41A + c.charCodeAt(0) - 97) : String.fromCodePoint(0x1D7CE + Number(c))).join('');
  return { name, typed };
}

forEachDatabase('typed usernames', (database) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('a typed username too long to read as any username is refused before NFKC reads it', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    // Past the bound by one unit: the most NFKC could bring under 30 characters is 30 code points of 2 units.
    const over = 'q'.repeat(TYPED_USERNAME_MAX_LENGTH + 1);
    const huge = 'q'.repeat(50_000);
    for (const username of [over, huge]) {
      let page = { status: 0, text: '' };
      assert.equal(await normalizes(over, async () => { page = await visitor.post('/signup', { username, password: PASSWORD }); }), false, `sign-up did not NFKC-read ${username.length} characters`);
      assert.equal(page.status, 400);
      assert.match(page.text, /Use 3 to 30 letters/);
    }
    await createAccount(t.deps.stores, t.clock, { username: 'qqq', password: PASSWORD });
    let signIn = { status: 0, text: '' };
    // The sign-in form's own cap is 256.
    assert.equal(await normalizes(over, async () => { signIn = await visitor.post('/login', { username: 'q'.repeat(256), password: PASSWORD }); }), false, 'sign-in did not NFKC-read it');
    assert.equal(signIn.status, 401);
    // The forgotten-password form and the command line look a typed name up with `findTypedAccount`.
    const findByUsername = t.deps.stores.users.findByUsername;
    let lookedUp = 0;
    t.deps.stores.users.findByUsername = (name) => { lookedUp++; return findByUsername.call(t.deps.stores.users, name); };
    try {
      assert.equal(await normalizes(over, () => findTypedAccount(t.deps.stores, `${' '.repeat(10)}${over}`)), false, 'the look-up did not NFKC-read it');
      assert.equal(lookedUp, 0, 'nor looked it up');
    } finally {
      t.deps.stores.users.findByUsername = findByUsername;
    }
  });

  test('a username typed at the bound still reads as the one it is: 30 mathematical letters of 2 units each', async () => {
    const { name, typed } = atTheBound('m');
    assert.equal(typed.length, TYPED_USERNAME_MAX_LENGTH);
    assert.equal(typed.normalize('NFKC'), name);
    const visitor = new AddressedVisitor(t.baseUrl);
    const page = await visitor.post('/signup', { username: ` ${typed} `, password: PASSWORD });
    assert.equal(page.status, 303, page.text.slice(0, 500));
    assert.equal((await findTypedAccount(t.deps.stores, typed))?.username, name);
  });

  test('the sign-up page\'s username field takes a username typed at the bound: its maxlength is the server\'s, in UTF-16 units as the server counts', async () => {
    const field = /<input[^>]*\bid="username"[^>]*>/.exec((await new AddressedVisitor(t.baseUrl).get('/signup')).text)?.[0] ?? '';
    assert.equal(/\bmaxlength="(\d+)"/.exec(field)?.[1], String(TYPED_USERNAME_MAX_LENGTH), field);
  });

  test('the sign-in page\'s username field refuses no username the server takes: the server trims what was typed before counting it, so a name at the bound with spaces around it fits the field', async () => {
    const { name, typed } = atTheBound('s');
    await createAccount(t.deps.stores, t.clock, { username: name, password: PASSWORD });
    const padded = `  ${typed}  `;
    const visitor = new AddressedVisitor(t.baseUrl);
    const field = /<input[^>]*\bid="username"[^>]*>/.exec((await visitor.get('/login')).text)?.[0] ?? '';
    assert.ok(padded.length <= Number(/\bmaxlength="(\d+)"/.exec(field)?.[1] ?? Infinity), `the browser would cut ${padded.length} units: ${field}`);
    assert.equal((await visitor.post('/login', { username: padded, password: PASSWORD })).status, 303, 'the server signs it in');
  });
  test('the sign-up form refuses no username the server takes: the server counts after NFKC, so the field sets no minlength a typed ligature falls under (ﬀa, 2 characters, is ffa)', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const typed = '\uFB00a';
    assert.equal(typed.normalize('NFKC'), 'ffa');
    const field = /<input[^>]*\bid="username"[^>]*>/.exec((await visitor.get('/signup')).text)?.[0] ?? '';
    const minlength = Number(/\bminlength="(\d+)"/.exec(field)?.[1] ?? 0);
    assert.ok(typed.length >= minlength, `the browser would refuse ${typed.length} characters: ${field}`);
    const page = await visitor.post('/signup', { username: typed, password: PASSWORD });
    assert.equal(page.status, 303, page.text.slice(0, 500));
    assert.equal((await findTypedAccount(t.deps.stores, typed))?.username, 'ffa');
  });

  test('a login_hint longer than the username field takes fills nothing in: cut to the field it would name another account', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const filled = async (hint: string) => /<input[^>]*\bid="username"[^>]*\bvalue="([^"]*)"/.exec((await visitor.get(`/login?login_hint=${encodeURIComponent(hint)}`)).text)?.[1];
    const atBound = 'h'.repeat(TYPED_USERNAME_MAX_LENGTH);
    assert.equal(await filled(atBound), atBound, 'a hint the field takes fills it');
    assert.equal(await filled(`${atBound}h`), '', 'one character more fills nothing');
  });

  test('a login_hint with a line break or another control character fills nothing in: the browser drops line breaks from the field, which would then name another account', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const filled = async (hint: string) => /<input[^>]*\bid="username"[^>]*\bvalue="([^"]*)"/.exec((await visitor.get(`/login?login_hint=${encodeURIComponent(hint)}`)).text)?.[1];
    for (const hint of ['mem\r\nber', 'mem\nber', 'mem\u0000ber']) assert.equal(await filled(hint), '', JSON.stringify(hint));
    assert.equal(await filled('ｍｅｍｂｅｒ'), 'ｍｅｍｂｅｒ', 'a full-width name, which NFKC reads, is filled as sent');
  });

  test('a login_hint that is an e-mail address fills nothing in: it signs no one in, and the member would type a password only to be told so', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const page = await visitor.get(`/login?login_hint=${encodeURIComponent('member@example.test')}`);
    assert.match(page.text, /<input type="text" id="username" name="username" value=""/);
  });

  test('an e-mail address typed as the username is told to be one, sent back to mend with the way to a forgotten username, and counts as no failed sign-in: no username holds "@", nor the full-width "＠" a Chinese input method types', async () => {
    const visitor = new AddressedVisitor(t.baseUrl);
    const member = await createAccount(t.deps.stores, t.clock, { username: `m${randomBytes(5).toString('hex')}`, password: PASSWORD });
    const problem = (page: string) => /<p class="field-error"[^>]*>([^]*?)<\/p>/.exec(page)?.[1]?.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim();
    for (const typed of ['me@example.test', 'me＠example.test', `${'m'.repeat(200)}@example.test`]) {
      const page = await visitor.post('/login', { username: typed, password: PASSWORD });
      assert.equal(page.status, 400, typed);
      assert.match(problem(page.text) ?? '', /^(Error: )?Sign in with your username: an e-mail address does not sign in here\. Forgot your username\? “Forgot password\?” below takes your verified e-mail address and mails you a link that names it\.$/, typed);
      assert.ok(page.text.includes(`value="${typed}"`), 'the username as typed, to mend');
      assert.match(page.text, /<input type="text" id="username"[^>]*aria-invalid="true"/);
    }
    visitor.cookies.set('lang', 'zh-CN');
    assert.match(problem((await visitor.post('/login', { username: 'me@example.test', password: PASSWORD })).text) ?? '', /请用用户名登录，邮箱地址不能用于登录。/);
    visitor.cookies.set('lang', 'zh-TW');
    assert.match(problem((await visitor.post('/login', { username: 'me@example.test', password: PASSWORD })).text) ?? '', /請用使用者名稱登入，電子郵件地址無法用於登入。/);
    visitor.cookies.set('lang', 'en');
    // Past the address's limit of failures, were they counted: the member behind it still signs in.
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ADDRESS; i++) assert.equal((await visitor.post('/login', { username: `${member.username}@example.test`, password: 'a wrong password' })).status, 400);
    assert.equal((await visitor.post('/login', { username: member.username, password: PASSWORD })).status, 303, 'none counted against the address');
  });
});
