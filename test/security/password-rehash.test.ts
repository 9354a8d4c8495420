/**
 * Passwords stored with earlier argon2id parameters (19 MiB, two passes, the service's before
 * decision 66) over real HTTP: they still sign in, and the right password is hashed again with
 * today's parameters at that sign-in, once; nothing else replaces a hash.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hash, verify } from '@node-rs/argon2';
import { performance } from 'node:perf_hooks';
import { WRONG_PASSWORD_FLOOR_MS, hashIsCurrent, hashPassword, verifyPassword, wrongPasswordTurnHold } from '../../src/core/accounts/passwords.js';
import { Browser, PASSWORD, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';

const EARLIER = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

test('a hash made today is current; one made with other parameters, or another algorithm, is not', async () => {
  assert.equal(hashIsCurrent(await hashPassword(PASSWORD)), true);
  assert.equal(hashIsCurrent(await hash(PASSWORD, EARLIER)), false);
  assert.equal(hashIsCurrent(await hash(PASSWORD, { ...EARLIER, memoryCost: 12_288, timeCost: 3, algorithm: 0 })), false, 'argon2d');
});

/**
 * The fastest of seven verifications of each kind, the kinds taken in turn (a loaded machine
 * slows some, not all), each checked to answer `right`.
 */
async function fastestTimes(kinds: Array<[stored: string, password: string, right: boolean]>): Promise<number[]> {
  const times = kinds.map((): number[] => []);
  for (let round = 0; round < 7; round += 1) {
    for (const [i, [stored, password, right]] of kinds.entries()) {
      const started = performance.now();
      assert.equal(await verifyPassword(stored, password), right);
      times[i]!.push(performance.now() - started);
    }
  }
  return times.map((list) => Math.min(...list));
}

test(`a wrong password is answered no sooner than ${WRONG_PASSWORD_FLOOR_MS} ms after its verification began, against today's hash, an earlier one, no account's or one argon2 cannot read`, async () => {
  for (const stored of [await hashPassword(PASSWORD), await hash(PASSWORD, EARLIER), undefined, 'not a hash']) {
    const started = performance.now();
    assert.equal(await verifyPassword(stored, 'wrong'), false);
    const took = performance.now() - started;
    assert.ok(took >= WRONG_PASSWORD_FLOOR_MS, `${stored?.slice(0, 30)}: ${took.toFixed(1)} ms`);
  }
});

test('a wrong password against today\'s hash is answered as slowly as one against an earlier hash, so the time does not tell whose member signed in since the change', async () => {
  const [wrongEarlier, wrongToday] = await fastestTimes([[await hash(PASSWORD, EARLIER), 'wrong', false], [await hashPassword(PASSWORD), 'wrong', false]]);
  // Without the floor the one took about 1.8 times the other.
  assert.ok(wrongToday! >= 0.85 * wrongEarlier!, `wrong against today's ${wrongToday!.toFixed(1)} ms, against an earlier ${wrongEarlier!.toFixed(1)} ms`);
});

test('a wrong password against today\'s hash keeps its turn in front of argon2 0.8 times its verification\'s time more, as long as an earlier hash takes, so the one behind it starts as late; against an earlier hash it keeps none', async () => {
  const today = await hashPassword(PASSWORD);
  assert.equal(wrongPasswordTurnHold(today, 10), 8);
  assert.equal(wrongPasswordTurnHold(today, 20), 16, 'a busier machine holds in proportion');
  assert.equal(wrongPasswordTurnHold(await hash(PASSWORD, EARLIER), 10), 0);
});

test('a right password is not held to the floor', async () => {
  const [fastest] = await fastestTimes([[await hashPassword(PASSWORD), PASSWORD, true]]);
  assert.ok(fastest! < WRONG_PASSWORD_FLOOR_MS * 0.8, `right ${fastest!.toFixed(1)} ms`);
});

forEachDatabase('passwords hashed with earlier parameters', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '127.0.0.1' } }); });
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

  test('ten right sign-ins at once of an account with an earlier hash all sign in, and one of them replaces the hash', async () => {
    const user = await userWithEarlierHash();
    const users = t.deps.stores.users;
    const rehash = users.rehashPassword;
    let replaced = 0;
    users.rehashPassword = async (...args) => {
      const wrote = await rehash.apply(users, args);
      if (wrote) replaced += 1;
      return wrote;
    };
    try {
      // Each from an address of its own, so no address's share of the queue in front of argon2 refuses one.
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => new Browser(t, { 'x-forwarded-for': `10.77.0.${i + 1}` }).signIn(user.username)));
      assert.deepEqual(answers.map((answer) => answer.status), Array(10).fill(303));
    } finally {
      users.rehashPassword = rehash;
    }
    assert.equal(replaced, 1);
    const now = await stored(user.username);
    assert.equal(hashIsCurrent(now), true);
    assert.equal(await verify(now, PASSWORD), true);
  });

  // The hash is read before the password's turn in front of argon2, and its replacement waits for
  // a second turn: on another instance, or behind a long queue, a password change can commit
  // meanwhile and end every other session, and the session the old password starts after it
  // would be its only survivor.
  test('a sign-in whose password is changed while its earlier hash is being replaced starts no session: the old password is wrong from the change on', async () => {
    const user = await userWithEarlierHash();
    const owner = new Browser(t);
    assert.equal((await owner.signIn(user.username)).status, 303);
    await t.deps.stores.users.setPasswordHash(user.id, user.earlier, t.deps.clock.now());
    const users = t.deps.stores.users;
    const rehash = users.rehashPassword;
    let reached!: () => void;
    const waiting = new Promise<void>((resolve) => { reached = resolve; });
    let changed!: () => void;
    const change = new Promise<void>((resolve) => { changed = resolve; });
    users.rehashPassword = async (...args) => {
      reached();
      await change;
      return rehash.apply(users, args);
    };
    const other = new Browser(t);
    let answer: Response;
    try {
      const signingIn = other.signIn(user.username);
      await waiting;
      const changing = await owner.postForm('/settings/security', {
        _csrf: owner.cookies.get('svc_csrf')!, action: 'change-password', current_password: PASSWORD, new_password: 'a brand new passphrase',
      });
      assert.equal(changing.status, 303);
      changed();
      answer = await signingIn;
    } finally {
      changed();
      users.rehashPassword = rehash;
    }
    assert.equal(answer.status, 401);
    assert.equal((await other.fetch('/settings/security')).status === 200, false, 'no session');
    assert.equal(await verify(await stored(user.username), 'a brand new passphrase'), true, 'the new password stays');
    assert.equal((await new Browser(t).signIn(user.username)).status, 401, 'the old password is wrong');
    assert.equal((await new Browser(t).signIn(user.username, 'a brand new passphrase')).status, 303);
  });
});
