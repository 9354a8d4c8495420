/** Pure rules of the OAuth core, as plain unit tests. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { appendQuery } from '../../src/core/oauth/authorize/request.js';
import { parseBasicAuthorization } from '../../src/core/oauth/client-auth.js';
import { OAuthError } from '../../src/core/errors.js';
import { findGrantType, registerGrantType } from '../../src/core/oauth/grants/registry.js';
import '../../src/core/oauth/grants/index.js';
import { paramsFromEntries, repeatedNames, single } from '../../src/core/oauth/params.js';
import { challengeOf, isValidCodeChallenge } from '../../src/core/oauth/pkce.js';

test('appendQuery adds parameters after an existing query without re-encoding it', () => {
  assert.equal(appendQuery('https://a.example/cb', { code: 'x y', state: undefined }), 'https://a.example/cb?code=x%20y');
  assert.equal(appendQuery('https://a.example/cb?t=a%20b', { code: 'c' }), 'https://a.example/cb?t=a%20b&code=c');
  assert.equal(appendQuery('https://a.example/cb?', { code: 'c' }), 'https://a.example/cb?code=c');
  assert.equal(appendQuery('https://a.example/cb?t=1&', { code: 'c&d' }), 'https://a.example/cb?t=1&code=c%26d');
});

test('Basic credentials are form-urlencoded before base64 (RFC 6749 2.3.1)', () => {
  const header = `Basic ${Buffer.from('my%3Aclient:p%40ss+word%25').toString('base64')}`;
  assert.deepEqual(parseBasicAuthorization(header), { clientId: 'my:client', secret: 'p@ss word%' });
  assert.equal(parseBasicAuthorization('Basic !!!'), 'malformed');
  assert.equal(parseBasicAuthorization(`Basic ${Buffer.from('no-colon').toString('base64')}`), 'malformed');
  assert.equal(parseBasicAuthorization(`Basic ${Buffer.from('a:%E0%A4%A').toString('base64')}`), 'malformed');
});

test('an empty Basic password is no secret, as an empty client_secret in the body is none (RFC 6749 2.3.1)', () => {
  assert.deepEqual(parseBasicAuthorization(`Basic ${Buffer.from('my-app:').toString('base64')}`), { clientId: 'my-app', secret: undefined });
});

test('the PKCE verifier must hash to the challenge (RFC 7636 4.6)', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  assert.equal(challenge, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  assert.equal(challengeOf(verifier), challenge);
  assert.notEqual(challengeOf(`${verifier}x`), challenge);
  assert.equal(challengeOf('short'), undefined, 'a verifier is 43 to 128 unreserved characters');
  assert.equal(isValidCodeChallenge(challenge), true);
  assert.equal(isValidCodeChallenge('a'.repeat(42)), false);
});

test('a repeated parameter is refused; an empty one counts as omitted (RFC 6749 3.1)', () => {
  const params = paramsFromEntries([['a', '1'], ['a', '2'], ['b', ''], ['b', '3'], ['c', '']]);
  assert.deepEqual(repeatedNames(params), ['a']);
  assert.throws(() => single(params, 'a'), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_request');
  assert.equal(single(params, 'b'), '3');
  assert.equal(single(params, 'c'), undefined);
});

test('grant types live in a map; registering one twice is a bug', () => {
  assert.ok(findGrantType('authorization_code'));
  assert.ok(findGrantType('refresh_token'));
  assert.equal(findGrantType('password'), undefined);
  assert.equal(findGrantType('__proto__'), undefined);
  assert.throws(() => registerGrantType('refresh_token', async () => { throw new Error('unused'); }, async () => null));
});
