/**
 * A member's mail is queued only while its address is still theirs (`MailOutboxStore.enqueue`),
 * on SQLite and PostgreSQL: a notice or reset mail whose address was read before the member
 * deleted their account (which erases their e-mail record, links and outbox) never brings the
 * erased address back, even when its transaction commits after the deletion's (PostgreSQL: a
 * second connection; SQLite runs one writer at a time).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { requestPasswordReset } from '../../src/core/accounts/password-reset.js';
import type { NewOutgoingMail } from '../../src/core/mail/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { unique } from '../oauth/helpers.js';
import { type TestAppWithSmtp, startAppWithSmtp } from '../support/app.js';
import { forEachDatabase, onPostgres } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 11, 1, 0, 0, 0);

/** A suite's members and mails, over the stores `get` returns once they are open. */
function helpers(get: () => Stores) {
  /** A member with a verified address. */
  async function member(): Promise<{ userId: number; address: string }> {
    const stores = get();
    const user = await stores.users.create({ username: unique('user'), passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, T0);
    const address = `${unique('m')}@example.test`;
    await stores.memberEmails.set(user.id, address, 'en', T0);
    assert.equal(await stores.memberEmails.markVerified(user.id, address.toLowerCase(), T0), true);
    return { userId: user.id, address };
  }
  const notice = (userId: number, to: string): NewOutgoingMail => ({
    to, userId, kind: 'noticePasswordChanged', subject: 'Your password was changed', text: 'It was.', html: null, language: 'en',
  });
  const queued = (userId: number) => get().mailOutbox.claim(unique('claim'), T0 + 1, T0 + 60_000, 100)
    .then((rows) => rows.filter((row) => row.userId === userId).length);
  /** What an account deletion writes of the member's mail (`deleteAccount`), in its transaction. */
  const eraseMail = async (tx: Stores, userId: number) => {
    await tx.memberEmails.erase(userId);
    await tx.mailOutbox.eraseForUser(userId);
  };
  return { member, notice, queued, eraseMail };
}

forEachDatabase('mail to an erased address', (database) => {
  let stores: Stores;
  storesForSuite(database, (opened) => { stores = opened; });

  const { member, notice, queued, eraseMail } = helpers(() => stores);

  test('a member\'s mail is queued only while its address is still theirs: none after their account\'s deletion erased it', async () => {
    const { userId, address } = await member();
    assert.equal(await stores.mailOutbox.enqueue(notice(userId, address), T0), true);
    await stores.transaction((tx) => eraseMail(tx, userId));
    assert.equal(await stores.mailOutbox.enqueue(notice(userId, address.toUpperCase()), T0), false);
    assert.equal(await queued(userId), 0);
    assert.equal(await stores.mailOutbox.enqueue({ ...notice(userId, address), userId: null }, T0), true, 'a mail of no account is queued as it comes');
  });
});

// A second connection between the mail's read of the record and its commit: PostgreSQL alone
// (SQLite's transactions run one at a time, in groups that commit together).
onPostgres('a mail racing the account deletion', (database) => {
  let stores: Stores;
  storesForSuite(database, (opened) => { stores = opened; });
  const { member, notice, queued } = helpers(() => stores);

  test('a mail whose transaction was under way when the account deletion erased the address, and commits after it, queues nothing', async () => {
    const { userId, address } = await member();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    let mailing!: Promise<boolean>;
    await stores.transaction(async (tx) => {
      await tx.memberEmails.erase(userId);
      // The mail's transaction, begun while the deletion's is open, commits only once the deletion has.
      mailing = stores.transaction(async (other) => {
        const done = await other.mailOutbox.enqueue(notice(userId, address), T0);
        await gate;
        return done;
      });
      await tx.mailOutbox.eraseForUser(userId);
    });
    open();
    assert.equal(await mailing, false);
    assert.equal(await queued(userId), 0, 'the erased address is not back in the outbox');
  });
});

forEachDatabase('a reset mail racing the account deletion', (database) => {
  let t: TestAppWithSmtp;
  before(async () => { t = await startAppWithSmtp(database); });
  after(() => t.close());

  test('a reset asked for an account whose deletion commits after its address was read writes neither the mail nor its link', async () => {
    const user = await t.deps.stores.users.create({ username: unique('user'), passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, t.clock.now());
    const address = `${unique('m')}@example.test`;
    await t.deps.stores.memberEmails.set(user.id, address, 'en', t.clock.now());
    assert.equal(await t.deps.stores.memberEmails.markVerified(user.id, address.toLowerCase(), t.clock.now()), true);
    const real = t.deps.stores;
    // The deletion's writes (`deleteAccount`) commit between the reset's read of the address and its transaction.
    const stores: Stores = {
      ...real,
      transaction: async (work) => {
        await real.transaction(async (tx) => {
          await tx.users.setStatus(user.id, 'deleted', t.clock.now(), 'active');
          await tx.memberEmails.erase(user.id);
          await tx.mailOutbox.eraseForUser(user.id);
        });
        return real.transaction(work);
      },
    };
    const asked = await requestPasswordReset({ ...t.deps, stores }, user.username, { address: '192.0.2.7', deviceCookie: undefined }, 'en');
    assert.ok(asked.ok);
    await asked.mailLinks();
    const db = t.deps.database.db;
    assert.deepEqual(await db.selectFrom('mail_outbox').select('id').where('user_id', '=', user.id).execute(), [], 'no mail to the erased address');
    assert.deepEqual(await db.selectFrom('email_links').select('token_hash').where('user_id', '=', user.id).execute(), [], 'no reset link of the deleted account');
  });
});
