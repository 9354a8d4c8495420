/**
 * attack126: "Not you?" refused a link whose account no longer waited for the address (it had
 * verified it with that very link, or moved on), changed nothing on that account, and still told
 * the mailbox's holder that the address "was taken off the account that asked for it". Whoever
 * read that believed a stranger's account no longer had their address while it kept it verified.
 * The page now says what was done.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { verifiedAddress } from '../support/member-mail.js';
import { AddressedVisitor } from '../site/visitor.js';

const PASSWORD = 'correct horse battery';

/** A browser that reads `language`. */
class Reader extends AddressedVisitor {
  constructor(baseUrl: string, private readonly language: string) {
    super(baseUrl);
  }

  override request(path: string, init: RequestInit = {}) {
    return super.request(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), 'accept-language': this.language } });
  }
}

forEachDatabase('attack126: the words of a refusal', (database) => {
  let t: TestAppWithSmtp;
  before(async () => {
    t = await startAppWithSmtp(database, { env: { TRUST_PROXY: '1' } });
  });
  after(async () => {
    await t.close();
  });

  test('refusing a link of an account that no longer waits for the address says nothing was taken off it, in each language', async () => {
    for (const [language, taken, kept] of [
      ['en', 'was taken off the account', 'so nothing was taken off it'],
      ['zh-CN', '已从申请它的账号中移除', '因此没有移除任何内容'],
      ['zh-TW', '已從申請它的帳號中移除', '因此沒有移除任何內容'],
    ] as const) {
      // An account of its own for each language: a link is refused once.
      const user = await createAccount(t.deps.stores, t.clock, { username: `u${randomBytes(5).toString('hex')}`, password: PASSWORD });
      const visitor = new AddressedVisitor(t.baseUrl);
      await visitor.signIn(user.username, PASSWORD);
      const email = await verifiedAddress(t, visitor);
      const token = /\/email\/not-mine\?token=([A-Za-z0-9_-]+)/.exec(t.smtp.to(email).at(-1)?.text ?? '')?.[1];
      assert.ok(token, 'the mail holds a "Not you?" link');
      const done = await new Reader(t.baseUrl, language).post('/email/not-mine', { token });
      assert.equal(done.status, 200, language);
      assert.ok(!done.text.includes(taken), `${language}: it does not say the address was taken off`);
      assert.ok(done.text.includes(kept), `${language}: it says nothing was taken off`);
      const after = await t.deps.stores.memberEmails.find(user.id);
      assert.ok(after?.verifiedAt !== null && after?.address === email, 'the verified address stays');
    }
  });
});
