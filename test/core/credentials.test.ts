import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  MARK_LENGTH, checksum, constantTimeEqual, digestsEqual, generateAuthorizationCode, generateOpaqueId, generateToken, hashSecret, tokenKind,
} from '../../src/core/credentials/formats.js';
import { TokenMarker } from '../../src/core/credentials/token-marks.js';
import {
  PASSWORD_HASHES_AT_ONCE, PASSWORD_HASHES_WAITING, PASSWORD_HASHES_WAITING_PER_ADDRESS, PasswordsBusyError, hashPassword, hashSlots, passwordHashQueue, verifyPassword,
} from '../../src/core/accounts/passwords.js';

test('tokens carry their prefix, 32 base62 characters and a 6-character checksum', () => {
  for (const [kind, prefix] of [['access', 'svco_'], ['refresh', 'svcr_'], ['personal', 'svcp_'], ['clientSecret', 'svcs_']] as const) {
    const token = generateToken(kind);
    assert.match(token, new RegExp(`^${prefix}[0-9A-Za-z]{38}$`));
    assert.equal(tokenKind(token), kind);
  }
});

test('the checksum is CRC32 of the prefix and random part, in base62 padded to 6', () => {
  const token = generateToken('access');
  const body = token.slice(0, -6);
  let n = crc32(body);
  let expected = '';
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  do { expected = alphabet[n % 62] + expected; n = Math.floor(n / 62); } while (n > 0);
  assert.equal(token.slice(-6), expected.padStart(6, '0'));
  assert.equal(checksum('svco_'), checksum('svco_'));
});

test('a token with one character changed fails its checksum offline', () => {
  const token = generateToken('personal');
  const i = 10;
  const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
  assert.equal(tokenKind(changed), undefined);
});

test('malformed tokens have no kind', () => {
  for (const garbage of ['', 'svco_', 'Bearer x', 'svcx_' + 'a'.repeat(38), generateToken('access') + 'a', 'svco_' + '!'.repeat(38)]) {
    assert.equal(tokenKind(garbage), undefined, garbage);
  }
});

test('tokens carry at least 160 random bits and do not repeat', () => {
  // 32 base62 characters: 32 × log2(62) ≈ 190 bits; with the service's mark, 27 of them ≈ 160.8.
  assert.ok((32 - MARK_LENGTH) * Math.log2(62) >= 160);
  const marker = new TokenMarker(randomBytes(32));
  const seen = new Set(Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? generateToken('access') : marker.generate('access'))));
  assert.equal(seen.size, 2000);
});

test('tokens, codes and random ids drawn in turn never repeat, across many refills of the random pool', () => {
  const drawn = Array.from({ length: 3000 }, (_, i) => [generateToken('refresh'), generateAuthorizationCode(), generateOpaqueId()][i % 3]!.slice(-32));
  assert.equal(new Set(drawn).size, drawn.length);
});

test('authorization codes are 256 random bits, base64url', () => {
  const code = generateAuthorizationCode();
  assert.match(code, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(Buffer.from(code, 'base64url').length, 32);
});

test('secrets are stored as SHA-256 and compared in constant time', () => {
  assert.equal(hashSecret('abc'), 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  assert.equal(constantTimeEqual('same', 'same'), true);
  assert.equal(constantTimeEqual('same', 'different length'), false);
  assert.equal(constantTimeEqual('abcd', 'abce'), false);
  assert.equal(digestsEqual(hashSecret('abc'), hashSecret('abc')), true);
  assert.equal(digestsEqual(hashSecret('abc'), hashSecret('abd')), false);
  assert.equal(digestsEqual(hashSecret('abc'), hashSecret('abc').slice(1)), false);
});

test('passwords are hashed with argon2id and verified; an unknown account verifies a decoy', async () => {
  const hash = await hashPassword('correct horse');
  assert.match(hash, /^\$argon2id\$/);
  assert.equal(await verifyPassword(hash, 'correct horse'), true);
  assert.equal(await verifyPassword(hash, 'wrong'), false);
  assert.equal(await verifyPassword(undefined, 'anything'), false);
  assert.equal(await verifyPassword('not a hash', 'anything'), false);
});

test('no more argon2 computations run at once than there are turns; the others wait their turn and all finish', async () => {
  const hash = await hashPassword('correct horse');
  await verifyPassword(undefined, 'x'); // the decoy hash, made at start, is done and holds no turn
  const burst = Array.from({ length: PASSWORD_HASHES_AT_ONCE + 3 }, (_, i) => verifyPassword(hash, i === 0 ? 'correct horse' : 'wrong'));
  const hashing = hashPassword('another password');
  assert.deepEqual(hashSlots(), { running: PASSWORD_HASHES_AT_ONCE, waiting: 4 }, 'hashing a new password waits in the same line');
  assert.deepEqual(await Promise.all(burst), [true, ...Array.from({ length: PASSWORD_HASHES_AT_ONCE + 2 }, () => false)]);
  assert.match(await hashing, /^\$argon2id\$/);
  assert.deepEqual(hashSlots(), { running: 0, waiting: 0 });
});

test('with every turn taken and the line full, a password is neither hashed nor checked: 503 temporarily_unavailable with Retry-After', async () => {
  const hash = await hashPassword('correct horse');
  await verifyPassword(undefined, 'x');
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const holders = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING }, () => passwordHashQueue.run(() => held));
  for (const refused of [verifyPassword(hash, 'correct horse'), verifyPassword(undefined, 'x'), hashPassword('a new password')]) {
    await assert.rejects(refused, (error: unknown) => {
      assert.ok(error instanceof PasswordsBusyError);
      assert.equal(error.code, 'temporarily_unavailable');
      assert.equal(error.status, 503);
      assert.ok(Number(error.headers['retry-after']) > 0, 'Retry-After in seconds');
      return true;
    });
  }
  release();
  await Promise.all(holders);
  assert.equal(await verifyPassword(hash, 'correct horse'), true, 'a freed line takes passwords again');
  assert.deepEqual(hashSlots(), { running: 0, waiting: 0 });
});

test('one address holds at most its share of the line: its next password is refused, another address\'s is checked', async () => {
  const hash = await hashPassword('correct horse');
  await verifyPassword(undefined, 'x');
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  // One held running, then the flooding address's share of the line behind it; the addresses of one IPv6 /64 are one sender.
  const holders = [passwordHashQueue.run(() => held), ...Array.from({ length: PASSWORD_HASHES_WAITING_PER_ADDRESS }, (_, i) => verifyPassword(hash, 'wrong', { address: `2001:db8::${i + 1}`, account: 'flood' }))];
  assert.ok(PASSWORD_HASHES_WAITING_PER_ADDRESS < PASSWORD_HASHES_WAITING, 'a share is less than the whole line');
  await assert.rejects(verifyPassword(hash, 'correct horse', { address: '2001:db8:0:0:ffff::9', account: 'flood' }), PasswordsBusyError);
  await assert.rejects(hashPassword('a new password', { address: '2001:db8::77', account: 'flood' }), PasswordsBusyError);
  const other = verifyPassword(hash, 'correct horse', { address: '198.51.100.7', account: 'flood' });
  assert.deepEqual(hashSlots(), { running: 1, waiting: PASSWORD_HASHES_WAITING_PER_ADDRESS + 1 });
  release();
  await Promise.all(holders);
  assert.equal(await other, true);
  assert.deepEqual(hashSlots(), { running: 0, waiting: 0 });
});
