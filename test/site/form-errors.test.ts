/**
 * Forms sent back with problems name every field at fault, beside the field, which is marked
 * `aria-invalid` and described by its message (issue 18 item 10). Over real HTTP on each database.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TYPED_USERNAME_MAX_LENGTH } from '../../src/core/accounts/accounts.js';
import { PASSWORD_MAX_LENGTH } from '../../src/core/accounts/passwords.js';
import { SIGN_IN_FAILURES_PER_DEVICE } from '../../src/core/accounts/sign-in.js';
import { SIGN_IN_USERNAME_MAX_LENGTH } from '../../src/http/views/sign-in.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor, signedInMember } from './visitor.js';

const PASSWORD = 'correct horse battery staple';

/** The opening tag of the element with this id. */
function element(page: string, id: string): string {
  const tag = new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`).exec(page)?.[0];
  assert.ok(tag, `an element #${id}`);
  return tag;
}

/**
 * `field`'s control is marked invalid and described by its message, which is on the page right
 * after it (before the next label) and says `message`.
 */
function assertFieldError(page: string, field: string, message: RegExp, options: { id?: string; hint?: string } = {}): void {
  const id = options.id ?? field;
  const control = element(page, id);
  assert.match(control, /aria-invalid="true"/, `#${id} is marked invalid`);
  const described = /aria-describedby="([^"]*)"/.exec(control)?.[1]?.split(' ') ?? [];
  assert.ok(described.includes(`${id}-error`), `#${id} is described by its message`);
  if (options.hint) assert.ok(described.includes(options.hint), `#${id} keeps its hint`);
  assert.equal((control.match(/aria-describedby=/g) ?? []).length, 1, 'one aria-describedby');
  const after = page.slice(page.indexOf(control) + control.length);
  const inline = new RegExp(`^[\\s\\S]*?<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(after);
  assert.ok(inline, `a message for #${id}`);
  assert.doesNotMatch(inline[0], /<label/, `the message for #${id} is beside it, before the next field`);
  assert.match(inline[1]!, message);
}

function assertFieldFine(page: string, id: string): void {
  assert.doesNotMatch(element(page, id), /aria-invalid/, `#${id} is not marked`);
  assert.doesNotMatch(page, new RegExp(`id="${id}-error"`));
}

forEachDatabase('form errors', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const member = async () => (await signedInMember(t, `former${++counter}`, PASSWORD)).visitor;

  test('a sign-up form with a bad username and a bad password names both, each beside its field, marked aria-invalid', async () => {
    const response = await new Visitor(t.baseUrl).post('/signup', { username: 'ab', password: 'short' });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'username', /^Use 3 to 30 letters/, { hint: 'username-hint' });
    assertFieldError(response.text, 'password', /^Use 8 to 256 characters/, { hint: 'password-hint' });
    const summary = /<div class="alert" role="alert" id="form-error">([\s\S]*?)<\/div>/.exec(response.text)?.[1];
    assert.ok(summary, 'a summary read out when the page loads');
    assert.match(summary, /2 things need fixing/);
    assert.match(summary, /<li>Username: Use 3 to 30 letters/);
    assert.match(summary, /<li>Password: Use 8 to 256 characters/);
    assert.equal((await t.deps.stores.users.findByUsername('ab')), undefined);
  });

  test('a reserved username and a common password are both named', async () => {
    const response = await new Visitor(t.baseUrl).post('/signup', { username: 'admin', password: 'password1' });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'username', /reserved/);
    assertFieldError(response.text, 'password', /most common passwords/);
  });

  test('a sign-up form with one bad field marks that field only', async () => {
    const response = await new Visitor(t.baseUrl).post('/signup', { username: 'fine-name', password: 'short' });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'password', /Use 8 to 256 characters/);
    assertFieldFine(response.text, 'username');
    assert.match(element(response.text, 'username'), /aria-describedby="username-hint"/, 'the hint still describes it');
    assert.match(response.text, /<p class="alert" role="alert" id="form-error">Password: Use 8 to 256 characters/);
  });

  test('a refused sign-up echoes its username and nickname cut at whole characters, never half an emoji', async () => {
    const typed = `${'a'.repeat(63)}\u{1f600}`;
    const response = await new Visitor(t.baseUrl).post('/signup', { username: typed, nickname: typed, password: 'short' });
    assert.equal(response.status, 400);
    for (const id of ['username', 'nickname']) {
      const value = /value="([^"]*)"/.exec(element(response.text, id))?.[1];
      assert.equal(value, typed, `#${id} keeps the emoji whole`);
    }
    assert.doesNotMatch(response.text, /\ufffd/, 'no replacement character');
    // A sign-in hint is never cut: one the field holds, an emoji ending it, fills it whole.
    const hint = `${'a'.repeat(TYPED_USERNAME_MAX_LENGTH - 2)}\u{1f600}`;
    const hinted = await new Visitor(t.baseUrl).get(`/login?login_hint=${encodeURIComponent(hint)}`);
    assert.equal(/value="([^"]*)"/.exec(element(hinted.text, 'username'))?.[1], hint, 'the sign-in hint keeps it whole too');
  });

  test('registering an app with several bad fields names every one of them beside its field', async () => {
    const visitor = await member();
    const response = await visitor.post('/settings/developers', {
      name: '', description: 'ok', homepage: 'javascript:alert(1)', redirect_uris: 'http://app.example/cb', type: 'secret',
      post_logout_redirect_uris: 'https://app.example/bye#x', backchannel_logout_uri: 'http://app.example/bc',
    });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'name', /^Use 1 to 80 characters/);
    assertFieldError(response.text, 'homepage', /^Enter an http or https address/);
    assertFieldError(response.text, 'redirect_uris', /must use https/, { hint: 'redirect-hint' });
    assertFieldError(response.text, 'type', /^Choose Confidential or Public/);
    assertFieldError(response.text, 'post_logout_redirect_uris', /has a fragment/, { hint: 'post-logout-hint' });
    assertFieldError(response.text, 'backchannel_logout_uri', /must use https/, { hint: 'backchannel-hint' });
    assertFieldFine(response.text, 'description');
    assert.match(response.text, /6 things need fixing/);
  });

  test("an app's sign-out settings with two bad fields name both", async () => {
    const visitor = await member();
    const created = await visitor.post('/settings/developers', { name: 'App', redirect_uris: 'https://app.example/cb', type: 'public' });
    // Post/redirect/get (issue 18 item 7): registration redirects to the new app's page.
    assert.equal(created.status, 303);
    const clientId = /^\/settings\/developers\/([0-9a-f]{32})\?/.exec(created.location ?? '')![1]!;
    const response = await visitor.post(`/settings/developers/${clientId}/logout-uris`, {
      post_logout_redirect_uris: 'http://app.example/bye', backchannel_logout_uri: 'https://user:pw@app.example/bc',
    });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'post_logout_redirect_uris', /must use https/);
    assertFieldError(response.text, 'backchannel_logout_uri', /contains credentials/);
    assertFieldFine(response.text, 'redirect_uris');
  });

  test('a password change with no current password and a bad new one names both', async () => {
    const visitor = await member();
    const response = await visitor.post('/settings/security', { action: 'change-password', current_password: '', new_password: 'short' });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'current_password', /Enter your current password/);
    assertFieldError(response.text, 'new_password', /^Use 8 to 256/, { hint: 'new-password-hint' });
  });

  test('a password change with a wrong current password and a too-weak new one names both at once, and the wrong one counts as a failed sign-in, as alone', async () => {
    const visitor = await member();
    for (let i = 0; i < SIGN_IN_FAILURES_PER_DEVICE; i += 1) {
      const response = await visitor.post('/settings/security', { action: 'change-password', current_password: `not my password ${i}`, new_password: 'short' });
      assert.equal(response.status, 400);
      assertFieldError(response.text, 'current_password', /^That is not your current password\.$/);
      assertFieldError(response.text, 'new_password', /^Use 8 to 256/, { hint: 'new-password-hint' });
      assert.match(response.text, /2 things need fixing/);
    }
    const refused = await visitor.post('/settings/security', { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' });
    assert.equal(refused.status, 429, 'each wrong current password was counted');
  });

  test('a current password longer than any password is not the current one, and, as at sign-in, counts as no failed attempt: pasted ten times it locks no one out', async () => {
    const visitor = await member();
    const pasted = 'p'.repeat(PASSWORD_MAX_LENGTH + 1);
    for (let i = 0; i <= SIGN_IN_FAILURES_PER_DEVICE; i += 1) {
      const response = await visitor.post('/settings/security', { action: 'change-password', current_password: `${pasted}${i}`, new_password: i % 2 === 0 ? `${pasted}${i}` : 'a brand new passphrase' });
      assert.equal(response.status, 400, `attempt ${i + 1}`);
      assertFieldError(response.text, 'current_password', /^That is not your current password\.$/);
    }
    const changed = await visitor.post('/settings/security', { action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase' });
    assert.equal(changed.status, 303, 'no attempt was counted');
  });

  test('a password change with the right current password and a too-weak new one names the new one alone', async () => {
    const visitor = await member();
    const response = await visitor.post('/settings/security', { action: 'change-password', current_password: PASSWORD, new_password: 'password123' });
    assert.equal(response.status, 400);
    assertFieldFine(response.text, 'current_password');
    assertFieldError(response.text, 'new_password', /most common passwords/, { hint: 'new-password-hint' });
  });

  test('writing or editing a post with an empty title, category and body names all three beside their fields', async () => {
    const visitor = await member();
    const written = await visitor.post('/posts/new', { title: ' ', category: '', body: '', status: 'published' });
    assert.equal(written.status, 400);
    assertFieldError(written.text, 'title', /^Use 1 to 120 characters\.$/);
    assertFieldError(written.text, 'category', /^Use 1 to 40 characters\.$/, { hint: 'category-hint' });
    assertFieldError(written.text, 'body', /^Use 1 to 20000 characters\.$/, { hint: 'body-hint' });
    // The summary, away from the fields, names each.
    for (const line of ['Title: Use 1 to 120', 'Category: Use 1 to 40', 'Text: Use 1 to 20000']) assert.match(written.text, new RegExp(`<li>${line} characters\\.</li>`));
    assert.match(written.text, /3 things need fixing/);

    const created = await visitor.post('/posts/new', { title: 'Fine', category: 'Notes', body: 'Fine.', status: 'draft' });
    assert.equal(created.status, 303);
    const edited = await visitor.post(`${created.location}/edit`, { title: 'Still fine', category: '', body: '', status: 'draft' });
    assert.equal(edited.status, 400);
    assertFieldFine(edited.text, 'title');
    assertFieldError(edited.text, 'category', /^Use 1 to 40 characters\.$/);
    assertFieldError(edited.text, 'body', /^Use 1 to 20000 characters\.$/);
    assert.match(edited.text, /2 things need fixing/);
  });

  test('a token form with no name, no scope, an unknown expiry and no password names all four beside their fields', async () => {
    const visitor = await member();
    const response = await visitor.post('/settings/tokens', { name: '', expires_in_days: '12', password: '' });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'name', /^Use 1 to 60 characters/, { hint: 'name-hint' });
    assertFieldError(response.text, 'scopes', /^Choose at least one scope/);
    assertFieldError(response.text, 'expires_in_days', /^Expiry must be/);
    assertFieldError(response.text, 'password', /^Enter your password/, { hint: 'password-hint' });
    assert.match(response.text, /4 things need fixing/);
  });

  test('a username or password longer than any account\'s is sent back on the sign-in form beside its field, the username as typed, never the password', async () => {
    const username = 'u'.repeat(SIGN_IN_USERNAME_MAX_LENGTH + 1);
    const named = await new Visitor(t.baseUrl).post('/login', { username, password: PASSWORD, return_to: '/settings' });
    assert.equal(named.status, 400);
    assertFieldError(named.text, 'username', /^No username is that long: at most 256 characters\.$/);
    assertFieldFine(named.text, 'password');
    assert.match(element(named.text, 'username'), new RegExp(`value="${username}"`), 'what was typed, to be mended');
    assert.doesNotMatch(named.text, new RegExp(PASSWORD), 'never the password');
    assert.match(named.text, /<input type="hidden" name="return_to" value="\/settings">/, 'still going where it was going');

    const long = 'p'.repeat(PASSWORD_MAX_LENGTH + 1);
    const password = await new Visitor(t.baseUrl).post('/login', { username: 'someone', password: long, return_to: '/' });
    assert.equal(password.status, 400);
    assertFieldError(password.text, 'password', /^At most 256 characters\.$/);
    assertFieldFine(password.text, 'username');
    assert.match(password.text, /<p class="alert" role="alert" id="form-error">Password: At most 256 characters\.<\/p>/);
    assert.doesNotMatch(password.text, new RegExp(long), 'never the password');
  });

  test('a username too long to be any account\'s is named on the sign-in form in the reader\'s language', async () => {
    const username = 'u'.repeat(SIGN_IN_USERNAME_MAX_LENGTH + 1);
    for (const [language, message] of [['zh-CN', /^用户名不会这么长：最多 256 个字符。$/], ['zh-TW', /^使用者名稱不會這麼長：最多 256 個字元。$/]] as const) {
      const visitor = new Visitor(t.baseUrl);
      const response = await visitor.request('/login', {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': language },
        body: new URLSearchParams({ _csrf: await visitor.csrf(), username, password: PASSWORD, return_to: '/' }),
      });
      assert.equal(response.status, 400, language);
      assertFieldError(response.text, 'username', message);
    }
  });

  test('a sign-up form with a username, nickname and password longer than any names all three beside their fields, not the generic error page', async () => {
    const long = 'x'.repeat(SIGN_IN_USERNAME_MAX_LENGTH + 1);
    const response = await new Visitor(t.baseUrl).post('/signup', { username: long, nickname: long, password: long });
    assert.equal(response.status, 400);
    assertFieldError(response.text, 'username', /^Use 3 to 30 letters/, { hint: 'username-hint' });
    assertFieldError(response.text, 'nickname', /./, { hint: 'nickname-hint' });
    assertFieldError(response.text, 'password', /^Use 8 to 256 characters/, { hint: 'password-hint' });
  });

  test('a wrong sign-in marks both fields, described by the one message that does not say which was wrong', async () => {
    const visitor = new Visitor(t.baseUrl);
    const response = await visitor.post('/login', { username: 'nobody-at-all', password: PASSWORD, return_to: '/' });
    assert.equal(response.status, 401);
    for (const id of ['username', 'password']) {
      assert.match(element(response.text, id), /aria-invalid="true" aria-describedby="form-error"/);
    }
    assert.match(response.text, /<p class="alert" role="alert" id="form-error">That username and password do not match/);
  });
});
