/**
 * The code's conditional writes on each database. `CodeStore.redeem`: a code's consumption and the
 * tokens made for it are stored together or not at all (RFC 6749 4.1.2: single use; issue 16: a
 * failure to issue leaves the code unused); PostgreSQL makes the tokens before its one write,
 * SQLite inside its transaction. `CodeStore.insertUnderRememberedConsent`: a code is stored only
 * while the remembered consent holds every scope it asks for (INTERFACE section 10).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuthorizationCode, CodeIssuance, CodeRedemption, GrantWithUser, PresentedCode } from '../../src/core/oauth/ports.js';
import type { Stores } from '../../src/core/stores.js';
import { unique } from '../oauth/helpers.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';

const T0 = Date.UTC(2026, 10, 29, 0, 0, 0);
const MINUTE = 60_000;
const REDIRECT = 'https://app.example/cb';

/** The token endpoint's refusal, as the core reads a grant. */
function refusal(granted: GrantWithUser | undefined): string | undefined {
  if (!granted || granted.grant.revokedAt !== null) return 'revoked';
  return granted.user.status === 'active' ? undefined : 'inactive';
}

/** Tokens of fresh hashes for the code's grant; `before` runs first (a failure, a change meanwhile). */
function issuing(before?: (code: AuthorizationCode) => Promise<void>): CodeRedemption<string> & { made: string[] } {
  const made: string[] = [];
  return {
    made,
    refusal,
    issue: async (code, { grant }): Promise<CodeIssuance<string>> => {
      await before?.(code);
      const common = { grantId: grant.id, clientId: code.clientId, userId: code.userId, scope: code.scope, createdAt: T0 + 1 };
      const access = unique('at');
      made.push(access);
      return { access: { ...common, tokenHash: access, expiresAt: T0 + 60 * MINUTE }, refresh: { ...common, tokenHash: unique('rt'), expiresAt: T0 + 600 * MINUTE }, touchGrant: false, answer: access };
    },
  };
}

forEachDatabase('the code\'s conditional writes', (database) => {
  let stores: Stores;
  storesForSuite(database, (opened) => { stores = opened; });

  /** A user, a client and a grant with one unused code under it; what redeems it. */
  const newCode = async (): Promise<{ presented: PresentedCode; grantId: number; userId: number }> => {
    const user = await stores.users.create({ username: unique('user'), passwordHash: 'hash', bio: '', member: false, level: 1, xp: 0 }, T0);
    const client = await stores.clients.create({
      clientId: unique('client'), name: 'App', description: '', homepageUrl: '', ownerId: null, type: 'public',
      redirectUris: [REDIRECT], allowedScopes: ['openid', 'profile:read'], secretHash: null, idTokenAlg: 'RS256',
    }, T0);
    const grant = await stores.grants.create({ userId: user.id, clientId: client.clientId, scope: 'profile:read', nonce: null, authTime: T0 }, T0);
    const codeHash = unique('code');
    await stores.codes.insert({
      codeHash, grantId: grant.id, clientId: client.clientId, userId: user.id, redirectUri: REDIRECT,
      scope: 'profile:read', codeChallenge: 'challenge', nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
    });
    return { presented: { codeHash, clientId: client.clientId, redirectUri: REDIRECT, codeChallenge: 'challenge' }, grantId: grant.id, userId: user.id };
  };

  test('a code is redeemed by exactly one of 20 racing redemptions, and only its tokens are stored', async () => {
    const { presented } = await newCode();
    const how = issuing();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => stores.codes.redeem(presented, T0 + 1, how)));
    const issued = outcomes.filter((o) => o.kind === 'issued');
    assert.equal(issued.length, 1);
    assert.ok(outcomes.every((o) => o.kind === 'issued' || o.kind === 'not_consumed'));
    const winner = (issued[0] as { answer: string }).answer;
    for (const access of how.made) assert.equal((await stores.tokens.findAccess(access)) !== undefined, access === winner, access);
    assert.equal((await stores.codes.find(presented.codeHash))?.usedAt, T0 + 1);
  });

  test('a redemption\'s write of its grant\'s last use only moves it forward: a later use recorded meanwhile stays', async () => {
    const { presented, grantId } = await newCode();
    await stores.grants.touch(grantId, T0 + 10 * MINUTE);
    const how = issuing();
    const touching: CodeRedemption<string> = { ...how, issue: async (code, granted) => ({ ...(await how.issue(code, granted))!, touchGrant: true }) };
    assert.equal((await stores.codes.redeem(presented, T0 + 1, touching)).kind, 'issued');
    assert.equal((await stores.grants.findById(grantId))?.lastUsedAt, T0 + 10 * MINUTE);
  });

  test('a redemption that fails to issue (a signature that throws) leaves the code unused; the next redeems it', async () => {
    const { presented } = await newCode();
    await assert.rejects(stores.codes.redeem(presented, T0 + 1, issuing(async () => { throw new Error('cannot sign'); })), /cannot sign/);
    assert.equal((await stores.codes.find(presented.codeHash))?.usedAt, null);
    assert.equal((await stores.codes.redeem(presented, T0 + 2, issuing())).kind, 'issued');
  });

  test('a request the code is not bound to writes nothing, and the code stays unused', async () => {
    const { presented } = await newCode();
    for (const wrong of [{ ...presented, redirectUri: `${REDIRECT}/` }, { ...presented, codeChallenge: 'other' }, { ...presented, clientId: 'another' }]) {
      const how = issuing();
      assert.deepEqual(await stores.codes.redeem(wrong, T0 + 1, how), { kind: 'not_consumed' });
      for (const access of how.made) assert.equal(await stores.tokens.findAccess(access), undefined);
    }
    assert.deepEqual(await stores.codes.redeem(presented, T0 + 5 * MINUTE, issuing()), { kind: 'not_consumed' }, 'expired');
    assert.equal((await stores.codes.find(presented.codeHash))?.usedAt, null);
  });

  test('a code whose grant is revoked, or whose user is suspended, is consumed and stays used; no tokens are stored', async () => {
    for (const end of ['revoke', 'suspend'] as const) {
      const { presented, grantId, userId } = await newCode();
      if (end === 'revoke') await stores.grants.revoke(grantId, 'consent_withdrawn', T0);
      else await stores.users.setStatus(userId, 'suspended', T0);
      const how = issuing();
      assert.deepEqual(await stores.codes.redeem(presented, T0 + 1, how), { kind: 'refused', reason: end === 'revoke' ? 'revoked' : 'inactive' });
      assert.deepEqual(how.made, [], 'nothing made');
      assert.equal((await stores.codes.find(presented.codeHash))?.usedAt, T0 + 1, end);
    }
  });

  test('a grant revoked while its tokens are made gets none: the code is consumed and stays used', async () => {
    for (const end of ['revoke', 'suspend'] as const) {
      const { presented, grantId, userId } = await newCode();
      const how = issuing(async () => {
        if (end === 'revoke') await stores.grants.revoke(grantId, 'consent_withdrawn', T0 + 1);
        else await stores.users.setStatus(userId, 'suspended', T0 + 1);
      });
      assert.deepEqual(await stores.codes.redeem(presented, T0 + 1, how), { kind: 'refused', reason: end === 'revoke' ? 'revoked' : 'inactive' });
      assert.equal(how.made.length, 1);
      assert.equal(await stores.tokens.findAccess(how.made[0]!), undefined, `${end}: no access token`);
      assert.equal((await stores.codes.find(presented.codeHash))?.usedAt, T0 + 1, end);
    }
  });

  test('a code is stored under a new grant only while the remembered consent holds every scope it asks for', async () => {
    const { presented, userId } = await newCode();
    const { clientId } = presented;
    const code = (scope: string) => ({
      codeHash: unique('code'), clientId, userId, redirectUri: REDIRECT, scope, codeChallenge: null, nonce: null, authTime: T0,
      createdAt: T0, expiresAt: T0 + 5 * MINUTE, amr: ['pwd'],
    });
    const stored = async (scope: string) => {
      const asked = code(scope);
      const answer = await stores.codes.insertUnderRememberedConsent(asked, 'sid');
      const found = await stores.codes.find(asked.codeHash);
      assert.equal(found !== undefined, answer, `${scope}: the answer says what was stored`);
      if (found) assert.equal((await stores.grants.findById(found.grantId))?.sid, 'sid');
      return answer;
    };
    assert.equal(await stored('profile:read'), false, 'no consent');
    await stores.consents.save(userId, clientId, 'openid profile:read', T0);
    assert.equal(await stored('profile:read'), true);
    assert.equal(await stored('openid profile:read'), true);
    assert.equal(await stored('profile:read openid'), true, 'in any order');
    assert.equal(await stored('openid profile:read posts:read'), false, 'a scope not granted');
    assert.equal(await stored('profile'), false, 'part of a scope\'s name');
    const other = await newCode();
    await stores.consents.save(other.userId, other.presented.clientId, 'posts:read', T0);
    assert.equal(await stored('posts:read'), false, 'another user\'s consent, for another client');
    await stores.consents.remove(userId, clientId);
    assert.equal(await stored('profile:read'), false, 'withdrawn');
  });

  test('a code is stored under the remembered consent only while its account is active: none is made for an account left active meanwhile', async () => {
    const { presented, userId } = await newCode();
    const { clientId } = presented;
    await stores.consents.save(userId, clientId, 'profile:read', T0);
    const stored = async () => {
      const codeHash = unique('code');
      const answer = await stores.codes.insertUnderRememberedConsent({
        codeHash, clientId, userId, redirectUri: REDIRECT, scope: 'profile:read', codeChallenge: null, nonce: null, authTime: T0, createdAt: T0, expiresAt: T0 + 5 * MINUTE,
      }, null);
      assert.equal(await stores.codes.find(codeHash) !== undefined, answer, 'the answer says what was stored');
      return answer;
    };
    // The status alone, as a racing deletion has changed it before its erase of the consent.
    for (const status of ['deleted', 'suspended'] as const) {
      assert.ok(await stores.users.setStatus(userId, status, T0 + 1));
      assert.equal(await stored(), false, status);
    }
    assert.ok(await stores.users.setStatus(userId, 'active', T0 + 2));
    assert.equal(await stored(), true, 'active again');
  });
});
