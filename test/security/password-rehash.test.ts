/**
 * Passwords stored with earlier argon2id parameters (19 MiB, two passes, the service's before
 * decision 66) over real HTTP: they still sign in, and the right password is hashed again with
 * today's parameters at that sign-in, once; nothing else replaces a hash.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hash, verify } from '@node-rs/argon2';
import { hashIsCurrent, hashPassword } from '../../src/core/accounts/passwords.js';
import { Browser, PASSWORD, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const EARLIER = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

test('a hash made today is current; one made with other parameters, or another algorithm, is not', async () => {
  assert.equal(hashIsCurrent(await hashPassword(PASSWORD)), true);
  assert.equal(hashIsCurrent(await hash(PASSWORD, EARLIER)), false);
  assert.equal(hashIsCurrent(await hash(PASSWORD, { ...EARLIER, memoryCost: 12_288, timeCost: 3, algorithm: 0 })), false, 'argon2d');
});

forEachDatabase('passwords hashed with earlier parameters', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  async function userWithEarlierHash(): Promise<{ username: string; id: number; earlier: string }> {
    const user = await newUser(t);
    const earlier = await hash(PASSWORD, EARLIER);
    await t.deps.stores.users.setPasswordHash(user.id, earlier, t.deps.clock.now());
    return { username: user.username, id: user.id, earlier };
  }

  const stored = async (username: string) => (await t.deps.stores.users.findCredentials(username))!.passwordHash;

  test('an earlier hash still signs in, and that sign-in replaces it with one of today\'s parameters for the same password, once', async () => {
    const user = await userWithEarlierHash();
    assert.equal((await new Browser(t).signIn(user.username)).status, 303);
    const rehashed = await stored(user.username);
    assert.notEqual(rehashed, user.earlier);
    assert.equal(hashIsCurrent(rehashed), true);
    assert.equal(await verify(rehashed, PASSWORD), true);
    assert.equal((await new Browser(t).signIn(user.username)).status, 303, 'the new hash signs in');
    assert.equal(await stored(user.username), rehashed, 'a current hash is not replaced');
  });

  test('a wrong password leaves an earlier hash as it is', async () => {
    const user = await userWithEarlierHash();
    assert.equal((await new Browser(t).signIn(user.username, 'not the password')).status, 401);
    assert.equal(await stored(user.username), user.earlier);
  });

  test('the right password of an account that is not active leaves its earlier hash as it is', async () => {
    const user = await userWithEarlierHash();
    await t.deps.stores.users.setStatus(user.id, 'suspended', t.deps.clock.now());
    assert.notEqual((await new Browser(t).signIn(user.username)).status, 303);
    assert.equal(await stored(user.username), user.earlier);
  });
});
