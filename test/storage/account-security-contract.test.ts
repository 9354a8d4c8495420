/**
 * The storage contract of account security (issue 18): every single-use thing is consumed by
 * exactly one of many racing callers, on SQLite and PostgreSQL alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConflictError } from '../../src/core/errors.js';
import type { Stores } from '../../src/core/stores.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const MINUTE = 60_000;
const RACERS = 20;

forEachDatabase('account security storage contract', (database) => {
  let stores: Stores;
  storesForSuite(database, (opened) => { stores = opened; });

  const newUser = () => stores.users.create({ username: unique('user'), passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, T0);
  /** How many of racing writes took effect: `true`, or the account status a write returns. */
  const winners = (results: ReadonlyArray<unknown>) => results.filter(Boolean).length;

  test('a security-log line written after its change is stored while its account is not deleted (active or suspended), column for column, and says whether it was', async () => {
    const user = await newUser();
    const line = { userId: user.id, kind: 'password.changed', createdAt: T0, address: '192.0.2.7', device: 'Firefox on Linux', detail: { other_sessions_signed_out: '0' } };
    assert.equal(await stores.securityEvents.insertUnlessDeleted(line), true, 'active');
    await stores.users.setStatus(user.id, 'suspended', T0);
    assert.equal(await stores.securityEvents.insertUnlessDeleted({ ...line, createdAt: T0 + 1 }), true, 'suspended');
    await stores.users.setStatus(user.id, 'deleted', T0);
    assert.equal(await stores.securityEvents.insertUnlessDeleted({ ...line, createdAt: T0 + 2 }), false, 'deleted');
    const stored = (await stores.securityEvents.listForUser(user.id, 0, 10)).items.map(({ id: _id, ...event }) => event);
    assert.deepEqual(stored, [{ ...line, createdAt: T0 + 1 }, line]);
  });

  test('a WebAuthn challenge is consumed once, for its purpose only, and not after it expires', async () => {
    const user = await newUser();
    const challenge = unique('c');
    await stores.passkeys.saveChallenge({ challenge, purpose: 'register', userId: user.id, expiresAt: T0 + 5 * MINUTE }, T0);
    assert.equal(await stores.passkeys.consumeChallenge(challenge, 'sign_in', T0 + 1), undefined, 'another purpose');
    const results = await Promise.all(Array.from({ length: RACERS }, () => stores.passkeys.consumeChallenge(challenge, 'register', T0 + 1)));
    assert.deepEqual(results.filter((r) => r !== undefined), [{ userId: user.id }]);
    const late = unique('c');
    await stores.passkeys.saveChallenge({ challenge: late, purpose: 'sign_in', userId: null, expiresAt: T0 + 5 * MINUTE }, T0);
    assert.equal(await stores.passkeys.consumeChallenge(late, 'sign_in', T0 + 5 * MINUTE), undefined, 'expired');
  });

  test('a signed sign-in challenge, never stored, is spent by one of many racing inserts', async () => {
    const challenge = unique('s');
    const spend = () => stores.passkeys.spendChallenge({ challenge, purpose: 'sign_in', userId: null, expiresAt: T0 + 5 * MINUTE }, T0 + 1);
    assert.equal(winners(await Promise.all(Array.from({ length: RACERS }, spend))), 1);
    assert.equal(await spend(), false, 'a replay later');
  });

  test('a new address given beside a verified one waits as pending, and replaces it only when verified; without a verified one it replaces it at once', async () => {
    const user = await newUser();
    assert.equal((await stores.memberEmails.set(user.id, 'First@example.test', 'en', T0)).email.pending, null);
    assert.equal((await stores.memberEmails.set(user.id, 'typo@example.test', 'en', T0)).email.address, 'typo@example.test', 'nothing verified to keep');
    assert.ok(await stores.memberEmails.markVerified(user.id, 'typo@example.test', T0));
    const { email: asked } = await stores.memberEmails.set(user.id, 'Next@example.test', 'zh-CN', T0 + 1);
    assert.deepEqual([asked.address, asked.pending, asked.verifiedAt], ['typo@example.test', 'Next@example.test', T0]);
    assert.equal(await stores.memberEmails.markVerified(user.id, 'other@example.test', T0 + 2), false, 'another address');
    assert.ok(await stores.memberEmails.markVerified(user.id, 'next@example.test', T0 + 3));
    const replaced = await stores.memberEmails.find(user.id);
    assert.deepEqual([replaced?.address, replaced?.pending, replaced?.verifiedAt], ['Next@example.test', null, T0 + 3]);
    assert.deepEqual(await stores.memberEmails.verifiedOwners('typo@example.test'), []);
    assert.deepEqual(await stores.memberEmails.verifiedOwners('next@example.test'), [user.id]);
    await stores.memberEmails.set(user.id, 'later@example.test', 'en', T0 + 4);
    assert.equal((await stores.memberEmails.set(user.id, 'next@EXAMPLE.test', 'en', T0 + 5)).email.pending, null, 'the verified address again drops the pending one');
    await stores.memberEmails.set(user.id, 'later@example.test', 'en', T0 + 6);
    assert.equal(await stores.memberEmails.cancelPending(user.id, T0 + 7), true);
    assert.equal(await stores.memberEmails.cancelPending(user.id, T0 + 8), false, 'nothing left to cancel');
    assert.deepEqual(await stores.memberEmails.verifiedOwners('next@example.test'), [user.id]);
    await stores.memberEmails.set(user.id, 'later@example.test', 'en', T0 + 9);
    assert.equal(await stores.memberEmails.cancelPending(user.id, T0 + 10, 'other@example.test'), false, 'another address is not the one waiting');
    assert.equal(await stores.memberEmails.cancelPending(user.id, T0 + 11, 'later@example.test'), true);
  });

  test('a change of a verified address is started by exactly one of many racing writes of it, and not by the pending address again', async () => {
    const user = await newUser();
    await stores.memberEmails.set(user.id, 'kept@example.test', 'en', T0);
    assert.ok(await stores.memberEmails.markVerified(user.id, 'kept@example.test', T0));
    const results = await Promise.all(Array.from({ length: RACERS }, () => stores.memberEmails.set(user.id, 'Asked@example.test', 'en', T0 + 1)));
    assert.equal(winners(results.map((r) => r.changeStarted)), 1);
    assert.ok(results.every((r) => r.email.pending === 'Asked@example.test' && r.email.address === 'kept@example.test'));
    assert.equal((await stores.memberEmails.set(user.id, 'asked@EXAMPLE.test', 'en', T0 + 2)).changeStarted, false, 'the same change again');
    assert.equal((await stores.memberEmails.set(user.id, 'another@example.test', 'en', T0 + 3)).changeStarted, true, 'a change to another address');
    assert.equal((await stores.memberEmails.set(user.id, 'kept@example.test', 'en', T0 + 4)).changeStarted, false, 'the verified address again');
    const fresh = await newUser();
    assert.equal((await stores.memberEmails.set(fresh.id, 'first@example.test', 'en', T0)).changeStarted, false, 'nothing verified: no change to tell of');
  });

  test('an address is verified only while its account is active, by the verifying write itself', async () => {
    const user = await newUser();
    await stores.memberEmails.set(user.id, 'held@example.test', 'en', T0);
    await stores.users.setStatus(user.id, 'suspended', T0);
    assert.equal(await stores.memberEmails.markVerified(user.id, 'held@example.test', T0 + 1), false);
    assert.equal((await stores.memberEmails.find(user.id))?.verifiedAt, null);
    await stores.users.setStatus(user.id, 'active', T0 + 2);
    assert.ok(await stores.memberEmails.markVerified(user.id, 'held@example.test', T0 + 3));
  });

  test('releasing an address takes it off the account while it waits (pending, or not verified), never once verified', async () => {
    const user = await newUser();
    await stores.memberEmails.set(user.id, 'first@example.test', 'en', T0);
    assert.equal(await stores.memberEmails.release(user.id, 'other@example.test', T0 + 1), false, 'not the account\'s');
    assert.equal(await stores.memberEmails.release(user.id, 'first@example.test', T0 + 1), true);
    assert.equal(await stores.memberEmails.find(user.id), undefined, 'the address not verified is gone');
    await stores.memberEmails.set(user.id, 'first@example.test', 'en', T0 + 2);
    assert.ok(await stores.memberEmails.markVerified(user.id, 'first@example.test', T0 + 2));
    await stores.memberEmails.set(user.id, 'next@example.test', 'en', T0 + 3);
    assert.equal(await stores.memberEmails.release(user.id, 'first@example.test', T0 + 4), false, 'a verified address stays');
    assert.equal(await stores.memberEmails.release(user.id, 'next@example.test', T0 + 4), true);
    const kept = await stores.memberEmails.find(user.id);
    assert.deepEqual([kept?.address, kept?.pending], ['first@example.test', null]);
  });

  test('an account\'s live link of a purpose is found while it is not used, ended or expired, and only that account\'s', async () => {
    const user = await newUser();
    const other = await newUser();
    const link = (tokenHash: string, userId: number, addressKey: string | null, purpose: 'verify_email' | 'reset_password' = 'verify_email') =>
      stores.memberEmails.createLink({ tokenHash, userId, purpose, addressKey, expiresAt: T0 + 5 * MINUTE }, T0);
    assert.equal(await stores.memberEmails.findAccountLiveLink(user.id, 'verify_email', T0), undefined, 'none mailed');
    await link(unique('r'), user.id, null, 'reset_password');
    await link(unique('o'), other.id, 'theirs@example.test');
    assert.equal(await stores.memberEmails.findAccountLiveLink(user.id, 'verify_email', T0), undefined, 'another purpose\'s, another account\'s');
    const mine = unique('m');
    await link(mine, user.id, 'mine@example.test');
    assert.deepEqual(await stores.memberEmails.findAccountLiveLink(user.id, 'verify_email', T0 + 1), { tokenHash: mine, userId: user.id, purpose: 'verify_email', addressKey: 'mine@example.test', expiresAt: T0 + 5 * MINUTE, refusedAt: null });
    assert.equal(await stores.memberEmails.findAccountLiveLink(user.id, 'verify_email', T0 + 5 * MINUTE), undefined, 'expired');
    await stores.memberEmails.endLinks(user.id, 'verify_email', T0 + 2);
    assert.equal(await stores.memberEmails.findAccountLiveLink(user.id, 'verify_email', T0 + 3), undefined, 'ended');
  });

  test('a verification link is refused once, used or ended too, and not after it expires; refusing uses it', async () => {
    const user = await newUser();
    const live = unique('l');
    await stores.memberEmails.createLink({ tokenHash: live, userId: user.id, purpose: 'verify_email', addressKey: 'held@example.test', expiresAt: T0 + 5 * MINUTE }, T0);
    const results = await Promise.all(Array.from({ length: RACERS }, () => stores.memberEmails.refuseLink(live, T0 + 1)));
    assert.deepEqual(results.filter((r) => r !== undefined).map((r) => r!.addressKey), ['held@example.test']);
    assert.equal((await stores.memberEmails.findLink(live, 'verify_email'))?.refusedAt, T0 + 1);
    assert.equal(await stores.memberEmails.consumeLink(live, 'verify_email', T0 + 2), undefined, 'refused, it verifies nothing');
    const used = unique('u');
    await stores.memberEmails.createLink({ tokenHash: used, userId: user.id, purpose: 'verify_email', addressKey: 'held@example.test', expiresAt: T0 + 5 * MINUTE }, T0);
    assert.ok(await stores.memberEmails.consumeLink(used, 'verify_email', T0 + 1));
    assert.ok(await stores.memberEmails.refuseLink(used, T0 + 2), 'used, it still proves a mail came');
    assert.equal(await stores.memberEmails.refuseLink(used, T0 + 5 * MINUTE), undefined);
    const late = unique('e');
    await stores.memberEmails.createLink({ tokenHash: late, userId: user.id, purpose: 'verify_email', addressKey: 'held@example.test', expiresAt: T0 + MINUTE }, T0);
    assert.equal(await stores.memberEmails.refuseLink(late, T0 + MINUTE), undefined, 'expired');
    const reset = unique('r');
    await stores.memberEmails.createLink({ tokenHash: reset, userId: user.id, purpose: 'reset_password', addressKey: null, expiresAt: T0 + 5 * MINUTE }, T0);
    assert.equal(await stores.memberEmails.refuseLink(reset, T0 + 1), undefined, 'a reset link has no "Not you?"');
  });

  test('a pending sign-in is consumed once and not after it expires', async () => {
    const user = await newUser();
    const idHash = unique('p');
    await stores.pendingSignIns.create({ idHash, userId: user.id, amr: ['pwd'], returnTo: '/x', expiresAt: T0 + 5 * MINUTE }, T0);
    assert.deepEqual((await stores.pendingSignIns.findLive(idHash, T0 + 1))?.amr, ['pwd']);
    assert.equal(winners(await Promise.all(Array.from({ length: RACERS }, () => stores.pendingSignIns.consume(idHash, T0 + 1)))), 1);
    assert.equal(await stores.pendingSignIns.findLive(idHash, T0 + 2), undefined);
    const late = unique('p');
    await stores.pendingSignIns.create({ idHash: late, userId: user.id, amr: ['pwd'], returnTo: '/', expiresAt: T0 + MINUTE }, T0);
    assert.equal(await stores.pendingSignIns.consume(late, T0 + MINUTE), false);
  });

  test('a one-time secret is taken once, by its user, purpose and subject only, and not after it expires', async () => {
    const user = await newUser();
    const other = await newUser();
    const idHash = unique('s');
    await stores.oneTimeSecrets.put({ idHash, userId: user.id, purpose: 'client_secret', subject: 'app-1', sealed: 'sealed-value', expiresAt: T0 + 5 * MINUTE }, T0);
    for (const wrong of [{ userId: other.id, purpose: 'client_secret', subject: 'app-1' }, { userId: user.id, purpose: 'personal_token', subject: 'app-1' }, { userId: user.id, purpose: 'client_secret', subject: 'app-2' }]) {
      assert.equal(await stores.oneTimeSecrets.take(idHash, wrong, T0 + 1), undefined, JSON.stringify(wrong));
    }
    const match = { userId: user.id, purpose: 'client_secret', subject: 'app-1' };
    const results = await Promise.all(Array.from({ length: RACERS }, () => stores.oneTimeSecrets.take(idHash, match, T0 + 1)));
    assert.deepEqual(results.filter((r) => r !== undefined), ['sealed-value']);
    const late = unique('s');
    await stores.oneTimeSecrets.put({ idHash: late, userId: user.id, purpose: 'personal_token', subject: '', sealed: 'x', expiresAt: T0 + MINUTE }, T0);
    assert.equal(await stores.oneTimeSecrets.take(late, { userId: user.id, purpose: 'personal_token', subject: '' }, T0 + MINUTE), undefined, 'expired');
  });

  test('a TOTP step is accepted once and never one at or before the last accepted; a recovery code is used once', async () => {
    const user = await newUser();
    assert.equal(await stores.secondFactors.startTotp(user.id, 'SECRET', T0), true);
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 100), undefined, 'not before enrolment is confirmed');
    assert.equal(await stores.secondFactors.confirmTotp(user.id, 100, ['h1', 'h2'], T0), true);
    assert.equal(await stores.secondFactors.confirmTotp(user.id, 101, ['h3'], T0), false, 'confirmed once');
    assert.equal(await stores.secondFactors.startTotp(user.id, 'OTHER', T0), false, 'an app in force is not replaced by a new enrolment');
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 100), undefined, 'the enrolment step is spent');
    assert.equal(winners(await Promise.all(Array.from({ length: RACERS }, () => stores.secondFactors.acceptTotpStep(user.id, 101)))), 1);
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 99), undefined);
    const uses = await Promise.all(Array.from({ length: RACERS }, () => stores.secondFactors.useRecoveryCode(user.id, 'h1', T0)));
    assert.deepEqual([uses.filter((use) => use === 'used').length, uses.filter((use) => use === 'wrong').length], [1, RACERS - 1]);
    assert.equal(await stores.secondFactors.countUnusedRecoveryCodes(user.id), 1);
    assert.equal(await stores.secondFactors.removeTotp(user.id), true);
    assert.equal(await stores.secondFactors.findTotp(user.id), undefined);
    assert.equal(await stores.secondFactors.countUnusedRecoveryCodes(user.id), 0);
  });

  test('a recovery code is spent only while its account is active, in the same write: of an account that is not, a right code is kept unused, a wrong one is wrong', async () => {
    const user = await newUser();
    await stores.secondFactors.replaceRecoveryCodes(user.id, ['k1'], T0);
    assert.ok(await stores.users.setStatus(user.id, 'suspended', T0));
    assert.deepEqual(await stores.secondFactors.useRecoveryCode(user.id, 'k1', T0 + 1), { kept: 'suspended' }, 'kept, with the status the write found');
    assert.equal(await stores.secondFactors.useRecoveryCode(user.id, 'other', T0 + 1), 'wrong');
    assert.equal(await stores.secondFactors.countUnusedRecoveryCodes(user.id), 1, 'the code is not spent');
    assert.ok(await stores.users.setStatus(user.id, 'active', T0 + 2));
    assert.equal(await stores.secondFactors.useRecoveryCode(user.id, 'k1', T0 + 3), 'used');
    assert.equal(await stores.secondFactors.useRecoveryCode(user.id, 'k1', T0 + 4), 'wrong', 'once');
  });

  test('a TOTP step and a passkey\'s use are recorded whatever the account\'s status, and return the status that same write found', async () => {
    const user = await newUser();
    await stores.secondFactors.startTotp(user.id, 'SECRET', T0);
    await stores.secondFactors.confirmTotp(user.id, 100, [], T0);
    const credentialId = unique('cred');
    await stores.passkeys.insert({ credentialId, userId: user.id, name: 'Key', publicKey: 'pk', counter: 0, transports: [], backedUp: false }, T0);
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 101), 'active');
    assert.equal(await stores.passkeys.recordUse(credentialId, 1, T0 + 1), 'active');
    assert.ok(await stores.users.setStatus(user.id, 'suspended', T0 + 2));
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 102), 'suspended');
    assert.equal(await stores.secondFactors.acceptTotpStep(user.id, 102), undefined, 'the step was recorded all the same');
    assert.equal(await stores.passkeys.recordUse(credentialId, 2, T0 + 3), 'suspended');
    assert.equal((await stores.passkeys.find(credentialId))?.counter, 2, 'and the counter');
  });

  test('a passkey registered by 20 racing requests lands once; every other is a ConflictError, never a failed statement', async () => {
    const owner = await newUser();
    const credentialId = unique('cred');
    const results = await Promise.allSettled(Array.from({ length: RACERS }, () =>
      stores.passkeys.insert({ credentialId, userId: owner.id, name: 'Key', publicKey: 'pk', counter: 0, transports: [], backedUp: false }, T0)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError, String(r.reason));
  });

  test("a passkey's signature counter is recorded by one of many racing uses with the same count, only ever moves up, and stays 0 for an authenticator that keeps none", async () => {
    const owner = await newUser();
    const counting = unique('cred');
    await stores.passkeys.insert({ credentialId: counting, userId: owner.id, name: 'Key', publicKey: 'pk', counter: 4, transports: [], backedUp: false }, T0);
    const results = await Promise.all(Array.from({ length: RACERS }, () => stores.passkeys.recordUse(counting, 5, T0 + 1)));
    assert.equal(winners(results), 1);
    assert.equal(await stores.passkeys.recordUse(counting, 3, T0 + 2), undefined, 'a lower count');
    assert.equal((await stores.passkeys.find(counting))?.counter, 5);
    assert.equal(await stores.passkeys.recordUse(counting, 6, T0 + 3), 'active');
    const uncounted = unique('cred');
    await stores.passkeys.insert({ credentialId: uncounted, userId: owner.id, name: 'Key', publicKey: 'pk', counter: 0, transports: [], backedUp: false }, T0);
    assert.equal(await stores.passkeys.recordUse(uncounted, 0, T0 + 1), 'active');
    assert.equal(await stores.passkeys.recordUse(uncounted, 0, T0 + 2), 'active');
  });

  test('passkeys are listed, renamed and removed by their owner only', async () => {
    const [owner, other] = [await newUser(), await newUser()];
    const credentialId = unique('cred');
    await stores.passkeys.insert({ credentialId, userId: owner.id, name: 'Laptop', publicKey: 'pk', counter: 0, transports: ['internal'], backedUp: false }, T0);
    assert.equal(await stores.passkeys.rename(other.id, credentialId, 'Mine'), false);
    assert.equal(await stores.passkeys.remove(other.id, credentialId), undefined);
    assert.equal(await stores.passkeys.rename(owner.id, credentialId, 'Old laptop'), true);
    assert.deepEqual((await stores.passkeys.listForUser(owner.id)).map((p) => [p.name, p.transports]), [['Old laptop', ['internal']]]);
    assert.equal((await stores.passkeys.remove(owner.id, credentialId))?.name, 'Old laptop');
    assert.deepEqual(await stores.passkeys.listForUser(owner.id), []);
  });

  test('sessions keep their amr, browser and address, and end one at a time or all but one, for their user only', async () => {
    const [user, other] = [await newUser(), await newUser()];
    const [a, b, c] = [unique('s'), unique('s'), unique('s')];
    for (const idHash of [a, b, c]) {
      await stores.sessions.create({ idHash, userId: user.id, authTime: T0, expiresAt: T0 + 60 * MINUTE, amr: ['pwd', 'otp'], userAgent: 'UA', address: '192.0.2.1' }, T0);
    }
    const [listed] = await stores.sessions.listForUser(user.id, T0 + 1);
    assert.deepEqual([listed!.amr, listed!.userAgent, listed!.address], [['pwd', 'otp'], 'UA', '192.0.2.1']);
    assert.deepEqual(await stores.sessions.end(a, T0 + 1), { userId: user.id });
    assert.equal(await stores.sessions.end(a, T0 + 1), undefined, 'ended once');
    assert.deepEqual(await stores.sessions.endOthersForUser(other.id, b, T0 + 2), [], 'another user ends none of them');
    assert.deepEqual(await stores.sessions.endOthersForUser(user.id, b, T0 + 2), [c], 'the ones this call ended');
    assert.deepEqual((await stores.sessions.listForUser(user.id, T0 + 3)).map((s) => s.idHash), [b]);
  });
});
