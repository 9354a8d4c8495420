/**
 * When "last used" is written (docs/api.md, "Last use"): `UsageRecorder`'s rules for tokens,
 * `needsTouch`'s for sessions and `prepareTokens`' for a grant at the token endpoint. Plain logic;
 * the HTTP behaviour is in test/api/last-used.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { type Bearer, UsageRecorder } from '../../src/core/api/bearer.js';
import { needsTouch } from '../../src/core/accounts/sessions.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { Client, Grant } from '../../src/core/oauth/ports.js';
import type { KeySet } from '../../src/core/oidc/key-ring.js';
import { TokenMarker } from '../../src/core/credentials/token-marks.js';
import { prepareTokens } from '../../src/core/oauth/tokens/issue.js';
import type { Stores } from '../../src/core/stores.js';

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const MINUTE = 60_000;

/** An access token of grant `grantId` (`tokenId`: which of its tokens). */
const access = (grantId: number, tokenId = grantId): Bearer => ({
  kind: 'access', tokenId, grantId, user: {} as User, clientId: 'app', scopes: [], resource: null, scheme: 'Bearer',
});

/** Stores that note each "last used" write, failing the writes `fail` says to; `release` lets held writes finish. */
function writes(fail: (n: number) => boolean = () => false) {
  const written: Array<[string, number, number]> = [];
  let held: Array<() => void> | undefined;
  const touch = (what: string) => async (id: number, now: number) => {
    written.push([what, id, now]);
    if (held) await new Promise<void>((resolve) => held!.push(resolve));
    if (fail(written.length)) throw new Error('refused by the test');
  };
  const stores = { grants: { touch: touch('grant') }, personalTokens: { touch: touch('personal') } } as unknown as Stores;
  return {
    stores, written,
    hold: () => { held = []; },
    release: () => { const waiting = held ?? []; held = undefined; for (const resolve of waiting) resolve(); },
  };
}

test('an access token\'s use is recorded on its grant: the tokens of one grant write it once a minute between them', async () => {
  const recorder = new UsageRecorder();
  const { stores, written } = writes();
  await recorder.record(stores, access(7, 100), T0);
  await recorder.record(stores, access(7, 101), T0 + 30_000);
  assert.deepEqual(written, [['grant', 7, T0]]);
  await recorder.record(stores, access(7, 101), T0 + MINUTE);
  assert.deepEqual(written, [['grant', 7, T0], ['grant', 7, T0 + MINUTE]]);
});

test('past its bound the recorder forgets the entry written longest ago, one at a time: the others still write once a minute', async () => {
  const recorder = new UsageRecorder(MINUTE, 2);
  const { stores, written } = writes();
  await recorder.record(stores, access(1), T0);
  await recorder.record(stores, access(2), T0 + 1);
  await recorder.record(stores, access(3), T0 + 2);
  assert.equal(written.length, 3);
  assert.equal(recorder.due(access(2), T0 + 3), false, 'the second is still remembered');
  assert.equal(recorder.due(access(3), T0 + 3), false, 'and the third');
  assert.equal(recorder.due(access(1), T0 + 3), true, 'the first, written longest ago, was forgotten');
});

test('a use whose write failed is written by the next use; while a write is in flight the other uses leave it to that one', async () => {
  const recorder = new UsageRecorder();
  const { stores, written, hold, release } = writes((n) => n === 1);
  hold();
  const first = recorder.record(stores, access(7), T0);
  const second = recorder.record(stores, access(7), T0 + 1);
  await second;
  assert.equal(written.length, 1, 'one write in flight, not one per use');
  release();
  await assert.rejects(first, /refused by the test/);
  assert.equal(recorder.due(access(7), T0 + 2), true, 'the failed write is not taken as written');
  await recorder.record(stores, access(7), T0 + 2);
  assert.deepEqual(written.map(([, , at]) => at), [T0, T0 + 2]);
  assert.equal(recorder.due(access(7), T0 + 3), false, 'once written, the next is a minute on');
});

test('a token used while the clock is behind the time last written (set back) writes nothing until a minute past that time: the store keeps the later one', async () => {
  const recorder = new UsageRecorder();
  const { stores, written } = writes();
  await recorder.record(stores, access(7), T0 + 60 * MINUTE);
  for (const at of [T0, T0 + 1, T0 + 30_000, T0 + MINUTE, T0 + 61 * MINUTE - 1, T0 + 61 * MINUTE]) await recorder.record(stores, access(7), at);
  assert.deepEqual(written.map(([, , at]) => at), [T0 + 60 * MINUTE, T0 + 61 * MINUTE]);
});

test('a token request on a grant last used later than the clock (set back, or another instance\'s ahead) does not touch the grant until a minute past that time', async () => {
  const grant: Grant = {
    id: 7, userId: 1, clientId: 'app', scope: 'profile:read', nonce: null, authTime: T0, createdAt: T0, lastUsedAt: T0 + 60 * MINUTE,
    revokedAt: null, revokedReason: null, sid: null, amr: null, resource: null,
  };
  const settings = { baseUrl: 'https://id.example', siteTimeZone: 'UTC', accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86_400 };
  // No `openid` in the scope: no id_token, so no signing key is read.
  const signing = { keys: {} as KeySet, marker: new TokenMarker(randomBytes(32)) };
  const touches = async (now: number) => (await prepareTokens(now, settings, signing, {
    grant, user: {} as User, client: { clientId: 'app' } as Client, accessScope: grant.scope, refreshScope: grant.scope, nonce: null, dpopJkt: null, resource: null,
  })).touchGrant;
  assert.equal(await touches(T0), false);
  assert.equal(await touches(T0 + 61 * MINUTE - 1), false);
  assert.equal(await touches(T0 + 61 * MINUTE), true);
});

test('a session seen later than the clock (set back, or another instance\'s ahead) is not touched until a minute past that time', () => {
  const session = { lastSeenAt: T0 + 60 * MINUTE };
  assert.equal(needsTouch(session, T0), false);
  assert.equal(needsTouch(session, T0 + 61 * MINUTE - 1), false);
  assert.equal(needsTouch(session, T0 + 61 * MINUTE), true);
});
