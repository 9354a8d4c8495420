/**
 * What a refused character is called matches what the field refuses (`checkedText` in
 * src/core/text.ts; docs/site.md, "Names and titles"): only a `name` (an app's, a category's)
 * refuses invisible characters and says so; a one-line field (a personal token's name, a title, a
 * bio), a body and an app's description refuse control characters and are told only of those.
 * Over real HTTP on each database, in every language.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { type Fields, type Visitor, signedInMember } from './visitor.js';
import { person } from '../staff/support.js';

const PASSWORD = 'correct horse battery staple';

/** The words each language refuses a control character with, and a control or invisible one. */
const CONTROLS: Record<string, string> = { en: 'Remove the control characters.', 'zh-CN': '请删除其中的控制字符。', 'zh-TW': '請刪除其中的控制字元。' };
const INVISIBLE: Record<string, string> = { en: 'Remove the control or invisible characters.', 'zh-CN': '请删除其中的控制字符或不可见字符。', 'zh-TW': '請刪除其中的控制字元或不可見字元。' };

forEachDatabase('control and invisible characters, as each field is told of them', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const member = () => signedInMember(t, `texter${++counter}`, PASSWORD);

  async function post(visitor: Visitor, path: string, fields: Fields, language: string) {
    return visitor.request(path, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': language },
      body: new URLSearchParams([['_csrf', await visitor.csrf()], ...Object.entries(fields).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => [k, one]))]),
    });
  }

  /** The message shown below the field `id`. */
  const fieldError = (page: string, id: string) => new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(page)?.[1];

  test('a personal token\'s name may hold invisible characters (only its own account reads it, and two tokens may share a name), so a control character in it is refused without a word of invisible ones', async () => {
    const { user, visitor } = await member();
    const token = { scopes: ['profile:read'], expires_in_days: '30', password: PASSWORD };
    const created = await post(visitor, '/settings/tokens', { ...token, name: 'CI\u200bdeploy' }, 'en');
    assert.equal(created.status, 303, 'a zero-width space is not refused');
    assert.deepEqual((await t.deps.stores.personalTokens.listForUser(user.id)).map((record) => record.name), ['CI\u200bdeploy']);
    for (const language of ['en', 'zh-CN', 'zh-TW']) {
      for (const name of ['CI\tdeploy', 'CI\u202edeploy']) {
        const refused = await post(visitor, '/settings/tokens', { ...token, name }, language);
        assert.equal(refused.status, 400, `${language} ${JSON.stringify(name)}`);
        assert.equal(fieldError(refused.text, 'name'), CONTROLS[language], `${language} ${JSON.stringify(name)}`);
      }
    }
    assert.equal((await t.deps.stores.personalTokens.listForUser(user.id)).length, 1, 'nothing more stored');
  });

  test('a title, a body, a comment, a bio and an app\'s description refuse control characters and say only that; an app\'s name refuses invisible ones and says so', async () => {
    const { visitor } = await member();
    for (const language of ['en', 'zh-CN', 'zh-TW']) {
      const written = await post(visitor, '/posts/new', { title: 'Ti\u0000tle', category: 'General', body: 'Bo\u0000dy', status: 'published' }, language);
      assert.equal(written.status, 400);
      assert.equal(fieldError(written.text, 'title'), CONTROLS[language], language);
      assert.equal(fieldError(written.text, 'body'), CONTROLS[language], language);
      const bio = await post(visitor, '/settings/profile', { bio: 'two\nlines' }, language);
      assert.equal(bio.status, 400);
      assert.equal(fieldError(bio.text, 'bio'), CONTROLS[language], language);
      const app = await post(visitor, '/settings/developers', {
        name: 'Pay\u200bPal', description: 'Reads your posts \u202eetirw ton seod', homepage: '', redirect_uris: 'https://app.example/cb', type: 'public',
      }, language);
      assert.equal(app.status, 400);
      assert.equal(fieldError(app.text, 'name'), INVISIBLE[language], language);
      assert.equal(fieldError(app.text, 'description'), CONTROLS[language], language);
    }
    const posted = await post(visitor, '/posts/new', { title: 'Fine', category: 'General', body: 'Fine.', status: 'published' }, 'en');
    assert.equal(posted.status, 303);
    const comment = await post(visitor, `${posted.location}/comments`, { comment: 'nul \u0000 inside' }, 'en');
    assert.equal(comment.status, 400);
    assert.ok(comment.text.includes(CONTROLS.en!), 'a comment is told of control characters only');
    assert.ok(!comment.text.includes(INVISIBLE.en!));
  });
});

forEachDatabase('C1 control characters, refused as control characters', (database) => {
  let t: TestApp;
  let counter = 0;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  const fieldError = (page: string, id: string) => new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(page)?.[1];

  // U+0085 NEXT LINE is a line break (UAX #14 class NL) and U+009B the 8-bit CONTROL SEQUENCE
  // INTRODUCER of a terminal's escape sequences: control characters (Cc) as much as U+0001 is.
  for (const [label, control] of [['U+0085 (next line)', '\u0085'], ['U+009B (control sequence introducer)', '\u009b']] as const) {
    test(`every text field refuses ${label} as a control character, as it refuses U+0001, in every language: a token's name, a title, a body, a comment, a bio, an app's description and a staff reason`, async () => {
      const { user, visitor } = await signedInMember(t, `cone${++counter}`, PASSWORD);
      const posted = await visitor.post('/posts/new', { title: 'Fine', category: 'General', body: 'Fine.', status: 'published' });
      assert.equal(posted.status, 303);
      const admin = await person(t, 'admin', { twoStep: true });
      const value = `left${control}right`;
      for (const language of ['en', 'zh-CN', 'zh-TW']) {
        visitor.cookies.set('lang', language);
        admin.visitor.cookies.set('lang', language);
        const token = await visitor.post('/settings/tokens', { name: value, scopes: ['profile:read'], expires_in_days: '30', password: PASSWORD });
        assert.equal(token.status, 400, `${language}: token name`);
        assert.equal(fieldError(token.text, 'name'), CONTROLS[language], `${language}: token name`);
        const post = await visitor.post('/posts/new', { title: value, category: 'General', body: value, status: 'published' });
        assert.equal(post.status, 400, `${language}: post`);
        assert.equal(fieldError(post.text, 'title'), CONTROLS[language], `${language}: title`);
        assert.equal(fieldError(post.text, 'body'), CONTROLS[language], `${language}: body`);
        const comment = await visitor.post(`${posted.location}/comments`, { comment: value });
        assert.equal(comment.status, 400, `${language}: comment`);
        assert.ok(comment.text.includes(CONTROLS[language]!), `${language}: comment`);
        const bio = await visitor.post('/settings/profile', { bio: value });
        assert.equal(bio.status, 400, `${language}: bio`);
        assert.equal(fieldError(bio.text, 'bio'), CONTROLS[language], `${language}: bio`);
        const app = await visitor.post('/settings/developers', { name: 'Fine App', description: value, homepage: '', redirect_uris: 'https://app.example/cb', type: 'public' });
        assert.equal(app.status, 400, `${language}: app description`);
        assert.equal(fieldError(app.text, 'description'), CONTROLS[language], `${language}: app description`);
        const reason = await admin.visitor.post(`/admin/members/${user.id}/status`, { status: 'active', reason: `checked ${control} twice`, confirm: 'yes' });
        assert.equal(reason.status, 400, `${language}: staff reason`);
        assert.equal(fieldError(reason.text, 'confirm-reason'), CONTROLS[language], `${language}: staff reason`);
      }
      assert.deepEqual(await t.deps.stores.personalTokens.listForUser(user.id), [], 'no token stored');
      assert.equal((await t.deps.stores.users.findById(user.id))?.bio ?? '', '', 'no bio stored');
    });
  }
});
