/**
 * The queue in front of argon2 over real HTTP (docs/performance.md, decision 39): sign-ins at once
 * all get their answer; a full queue is a 503 page with Retry-After, not a 500 and not a failed
 * sign-in, so it never counts toward a lockout; every form that hashes a password waits in it;
 * one address holds only its share of the line.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  PASSWORD_HASHES_AT_ONCE, PASSWORD_HASHES_WAITING, PASSWORD_HASHES_WAITING_PER_ADDRESS, hashSlots, passwordHashQueue,
} from '../../src/core/accounts/passwords.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT } from '../../src/core/accounts/sign-in.js';
import { Browser, PASSWORD, hiddenFields, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { holdsWithin } from '../support/eventually.js';

forEachDatabase('the password hash queue', (database) => {
  let t: TestApp;
  // One proxy in front (INTERFACE section 8), so each test speaks from an address of its own.
  // Two sign-ups an hour per address, so the test of sign-up shows that its refusals count for none.
  before(async () => { t = await startTestApp(database, { env: { TRUST_PROXY: '1', SIGN_UPS_PER_HOUR: '2' } }); });
  after(() => t.close());

  let addresses = 0;
  const browser = () => new Browser(t, { 'x-forwarded-for': `203.0.113.${++addresses}` });

  /** Takes every turn and every place in the line until the returned function is called. */
  async function fillQueue(): Promise<() => Promise<void>> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const holders = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING }, () => passwordHashQueue.run(() => held));
    assert.deepEqual(hashSlots(), { running: PASSWORD_HASHES_AT_ONCE, waiting: PASSWORD_HASHES_WAITING });
    return async () => { release(); await Promise.all(holders); };
  }

  test('sign-ins at once, right and wrong passwords mixed, each get their own answer', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => newUser(t)));
    const answers = await Promise.all(users.flatMap((user) => [browser().signIn(user.username), browser().signIn(user.username, 'not the password')]));
    assert.deepEqual(answers.map((answer) => answer.status), users.flatMap(() => [303, 401]));
    assert.deepEqual(hashSlots(), { running: 0, waiting: 0 });
  });

  test('with the queue full, a sign-in is a 503 page with Retry-After, not a session and not a failure; once it drains the same password signs in', async () => {
    const user = await newUser(t);
    const person = browser();
    const release = await fillQueue();
    let refused: Response[];
    try {
      // More refusals than the account's failure limit: none of them may count toward it.
      refused = [];
      for (let i = 0; i <= SIGN_IN_FAILURES_PER_ACCOUNT; i++) refused.push(await person.signIn(user.username, i === 0 ? PASSWORD : `guess ${i}`));
    } finally {
      await release();
    }
    for (const answer of refused) {
      assert.equal(answer.status, 503);
      assert.ok(Number(answer.headers.get('retry-after')) > 0, 'Retry-After in seconds');
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.equal(answer.headers.get('location'), null, 'not signed in');
      assert.match(answer.headers.get('content-type') ?? '', /^text\/html/);
    }
    assert.match(await refused[0]!.text(), /Too many passwords are being checked right now/);
    assert.equal(person.cookies.get('svc_session'), undefined, 'no session cookie');
    assert.equal((await person.signIn(user.username)).status, 303, 'the refusals did not lock the account');
  });

  test('one site sending a right password again and again (from the /64s of one /56) holds only its share of the line: its extra sign-ins are 503, another address still signs in', async () => {
    const user = await newUser(t);
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const running = Array.from({ length: PASSWORD_HASHES_AT_ONCE }, () => passwordHashQueue.run(() => held));
    // One more than the share: the account's failure limit counts each until it is answered, so more at once would be throttled (429), not queued.
    assert.ok(PASSWORD_HASHES_WAITING_PER_ADDRESS + 1 < SIGN_IN_FAILURES_PER_ACCOUNT);
    const flood = Array.from({ length: PASSWORD_HASHES_WAITING_PER_ADDRESS + 1 }, (_, i) => new Browser(t, { 'x-forwarded-for': `2001:db8:1:1${i.toString(16).padStart(2, '0')}::66` }).signIn(user.username));
    assert.ok(await holdsWithin(5_000, async () => hashSlots().waiting === PASSWORD_HASHES_WAITING_PER_ADDRESS), 'the flooding address fills its share');
    const member = browser().signIn(user.username);
    const memberWaits = await holdsWithin(5_000, async () => hashSlots().waiting === PASSWORD_HASHES_WAITING_PER_ADDRESS + 1);
    release();
    await Promise.all(running);
    assert.ok(memberWaits, 'another address still finds a place in the line');
    const statuses = (await Promise.all(flood)).map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [...Array(PASSWORD_HASHES_WAITING_PER_ADDRESS).fill(303), 503]);
    assert.equal((await member).status, 303);
  });

  test('one member sending its right password again and again cannot keep out the others behind its address (a NAT): another account\'s sign-in takes a place of the flooder\'s', async () => {
    const [flooder, member] = await Promise.all([newUser(t), newUser(t)]);
    const shared = { 'x-forwarded-for': `198.51.100.${++addresses}` };
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const running = Array.from({ length: PASSWORD_HASHES_AT_ONCE }, () => passwordHashQueue.run(() => held));
    let floodRefused = 0;
    // One more than the share, fewer at once than the account's failure limit (as above).
    assert.ok(PASSWORD_HASHES_WAITING_PER_ADDRESS + 1 < SIGN_IN_FAILURES_PER_ACCOUNT);
    const flood = Array.from({ length: PASSWORD_HASHES_WAITING_PER_ADDRESS + 1 }, () => new Browser(t, shared).signIn(flooder.username).then((answer) => {
      if (answer.status === 503) floodRefused++;
      return answer;
    }));
    assert.ok(await holdsWithin(5_000, async () => hashSlots().waiting === PASSWORD_HASHES_WAITING_PER_ADDRESS && floodRefused === 1), 'the flooder fills the address\'s share');
    const signIn = new Browser(t, shared).signIn(member.username);
    const madeRoom = await holdsWithin(5_000, async () => floodRefused === 2);
    release();
    await Promise.all(running);
    assert.ok(madeRoom, 'a flooding sign-in was refused to make room for the member');
    assert.equal((await signIn).status, 303, 'the member behind the same address signs in');
    const statuses = (await Promise.all(flood)).map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [...Array(PASSWORD_HASHES_WAITING_PER_ADDRESS - 1).fill(303), 503, 503], 'one refused for the full share, one to make room');
  });

  test('senders filling the line together, each within its share (each from a /48 of its own), still let another address sign in: it pushes out a place of one of them', async () => {
    const senders = PASSWORD_HASHES_WAITING / PASSWORD_HASHES_WAITING_PER_ADDRESS;
    // One account per sender: its sign-ins in flight stay under the account's failure limit.
    const users = await Promise.all(Array.from({ length: senders }, () => newUser(t)));
    const member = await newUser(t);
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const running = Array.from({ length: PASSWORD_HASHES_AT_ONCE }, () => passwordHashQueue.run(() => held));
    const flood = users.flatMap((user, sender) => Array.from({ length: PASSWORD_HASHES_WAITING_PER_ADDRESS }, () => (
      new Browser(t, { 'x-forwarded-for': `2001:db8:${(0x100 + sender).toString(16)}::1` }).signIn(user.username))));
    assert.ok(await holdsWithin(5_000, async () => hashSlots().waiting === PASSWORD_HASHES_WAITING), 'the senders fill the line');
    const signIn = browser().signIn(member.username);
    const oneRefused = await Promise.race([Promise.any(flood.map(async (answer) => {
      if ((await answer).status !== 503) throw new Error('not refused');
    })).then(() => true), signIn.then(() => false)]);
    release();
    await Promise.all(running);
    assert.equal((await signIn).status, 303, 'the member signs in');
    assert.ok(oneRefused, 'a flooding sign-in was refused to make room, before the member was answered');
    const statuses = (await Promise.all(flood)).map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [...Array(PASSWORD_HASHES_WAITING - 1).fill(303), 503]);
  });

  test('with the queue full, signing up is refused the same way, makes no account and counts toward no sign-up limit', async () => {
    const username = (i: number) => `queued${i}x${Date.now() % 1_000_000}`;
    const person = browser();
    const signUp = async (name: string) => {
      const csrf = hiddenFields(await (await person.fetch('/signup')).text()).find(([n]) => n === '_csrf')![1];
      return person.postForm('/signup', { username: name, password: PASSWORD, _csrf: csrf });
    };
    const limit = t.deps.settings.signUpsPerHour;
    const release = await fillQueue();
    const refused: Response[] = [];
    try {
      for (let i = 0; i <= limit; i++) refused.push(await signUp(username(i)));
    } finally {
      await release();
    }
    for (const answer of refused) {
      assert.equal(answer.status, 503);
      assert.ok(Number(answer.headers.get('retry-after')) > 0);
    }
    for (let i = 0; i <= limit; i++) assert.equal(await t.deps.stores.users.findCredentials(username(i)), undefined, 'no account was made');
    assert.equal((await signUp(username(limit + 1))).status, 303, 'the refusals did not use up the address\'s sign-ups');
  });
});
