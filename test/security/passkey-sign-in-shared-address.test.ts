/**
 * Passkey sign-in behind one address shared by many (a campus NAT): its challenges are signed, not
 * stored, so they need no limit per address and one script asking for them without end refuses no
 * one there; nothing is stored but a challenge a response verified, which is then spent once
 * (W3C WebAuthn 13.4.3). Over real HTTP on each database, with a software authenticator.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CHALLENGE_LIFETIME_MS } from '../../src/core/accounts/passkeys.js';
import { CLOCK_SKEW_MS } from '../../src/core/time.js';
import { PASSKEY_OPTIONS_PER_MINUTE } from '../../src/http/routes/sign-in.js';
import { runJanitor } from '../../src/janitor.js';
import { Browser, newUser } from '../oauth/helpers.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { addPasskey, passkeyAlone } from '../support/passkey.js';

forEachDatabase('passkey sign-in behind a shared address', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  /** A member with a passkey, in a browser of their own: every browser here sends from 127.0.0.1. */
  async function memberWithPasskey(options: { counts?: boolean } = {}) {
    const user = await newUser(t);
    const browser = new Browser(t);
    assert.equal((await browser.signIn(user.username)).status, 303);
    return { user, passkey: await addPasskey(t, browser, options) };
  }

  const storedChallenges = async () => Number((await t.deps.database.db.selectFrom('webauthn_challenges')
    .select((eb) => eb.fn.countAll().as('n')).where('purpose', '=', 'sign_in').executeTakeFirstOrThrow()).n);

  test('a script asking for passkey sign-in challenges without end at a shared address leaves the members there their passkey sign-in', async () => {
    const { passkey } = await memberWithPasskey();
    const script = new Browser(t);
    await script.fetch('/login');
    for (let i = 0; i < PASSKEY_OPTIONS_PER_MINUTE * 3; i++) {
      assert.equal((await script.postForm('/login/passkey/options', { _csrf: script.cookies.get('svc_csrf')! })).status, 200, `challenge ${i + 1}`);
    }
    assert.equal((await passkeyAlone(new Browser(t), passkey)).status, 303, 'the member behind the same address signs in');
  });

  test('a passkey sign-in challenge is stored only once a response verifies, and is then spent: asking stores nothing, a forged response stores nothing, a replay, a changed challenge and an ended one are refused', async () => {
    const { passkey } = await memberWithPasskey();
    const before = await storedChallenges();
    const script = new Browser(t);
    await script.fetch('/login');
    for (let i = 0; i < 50; i++) await script.postForm('/login/passkey/options', { _csrf: script.cookies.get('svc_csrf')! });
    assert.equal((await passkeyAlone(new Browser(t), passkey, true)).status, 401);
    assert.equal(await storedChallenges(), before, 'no challenge stored for the asks or the forged response');
    const browser = new Browser(t);
    const signedIn = await passkeyAlone(browser, passkey);
    assert.equal(signedIn.status, 303);
    assert.equal(await storedChallenges(), before + 1, 'the verified response spent its challenge');
    const replay = await browser.postForm('/login/passkey', { _csrf: browser.cookies.get('svc_csrf')!, return_to: '/', credential: signedIn.credential });
    assert.equal(replay.status, 401, 'the same response again is refused');

    await browser.fetch('/login');
    const options = await (await browser.postForm('/login/passkey/options', { _csrf: browser.cookies.get('svc_csrf')! })).json() as { challenge: string };
    const changed = Buffer.from(options.challenge, 'base64url');
    changed[0]! ^= 1;
    const answer = (challenge: string) => browser.postForm('/login/passkey', { _csrf: browser.cookies.get('svc_csrf')!, return_to: '/', credential: passkey.assert({ challenge }) });
    assert.equal((await answer(changed.toString('base64url'))).status, 401, 'a challenge the site did not sign');
    t.clock.advance(5 * 60_000 + 1);
    assert.equal((await answer(options.challenge)).status, 401, 'a challenge past its 5 minutes');
  });

  test('a spent sign-in challenge stays spent in any spelling of it, and past its end by the clocks\' skew, whatever the janitor\'s clock says', async () => {
    // A synced passkey's counter is always 0: nothing but the challenge tells its replay.
    const { passkey } = await memberWithPasskey({ counts: false });
    const browser = new Browser(t);
    await browser.fetch('/login');
    const challenge = async () => ((await (await browser.postForm('/login/passkey/options', { _csrf: browser.cookies.get('svc_csrf')! })).json()) as { challenge: string }).challenge;
    const send = (credential: string) => browser.postForm('/login/passkey', { _csrf: browser.cookies.get('svc_csrf')!, return_to: '/', credential });

    const first = await challenge();
    assert.equal((await send(passkey.assert({ challenge: first }))).status, 303);
    const respelt = `${Buffer.from(first, 'base64url').toString('base64')}=`;
    assert.notEqual(respelt, first);
    assert.deepEqual(Buffer.from(respelt, 'base64url'), Buffer.from(first, 'base64url'), 'the same challenge, spelt otherwise');
    assert.equal((await send(passkey.assert({ challenge: respelt }))).status, 401, 'another spelling of a spent challenge');

    const response = passkey.assert({ challenge: await challenge() });
    assert.equal((await send(response)).status, 303);
    // The janitor sweeps 10 s after the challenge's end by its own clock; an instance whose clock
    // runs 30 s behind the janitor's (within CLOCK_SKEW_MS) still takes the challenge as live.
    assert.ok(30_000 <= CLOCK_SKEW_MS);
    t.clock.advance(CHALLENGE_LIFETIME_MS + 10_000);
    await runJanitor(t.deps);
    t.clock.advance(-30_000);
    assert.equal((await send(response)).status, 401, 'the replay on the instance whose clock runs behind');
  });

});
