import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPassword, checkUsername, isReservedUsername } from '../../src/core/accounts/accounts.js';
import { addressKey, siteKey } from '../../src/core/addresses.js';
import { checkClientDetails, checkRedirectUris, isRegisteredRedirectUri, redirectUriProblem } from '../../src/core/oauth/clients.js';
import { InputError } from '../../src/core/errors.js';
import { REGISTERED_SCOPES, formatScope, holdsEveryScope, parseScope, permittedScopes } from '../../src/core/oauth/scopes.js';
import { checkedText, withInvisibleEscaped } from '../../src/core/text.js';
import { formatLocalTimestamp, formatUtc } from '../../src/core/time.js';
import { encodeComponent } from '../../src/core/urls.js';

test('timestamps are ISO-8601 local time in UTC+8 without offset', () => {
  assert.equal(formatLocalTimestamp(Date.UTC(2026, 10, 22, 0, 30, 48)), '2026-11-22T08:30:48');
  assert.equal(formatLocalTimestamp(Date.UTC(2026, 11, 31, 20, 0, 0, 999)), '2027-01-01T04:00:00');
  assert.equal(formatUtc(Date.UTC(2026, 10, 22, 0, 30, 48, 500)), '2026-11-22T00:30:48Z');
});

test('local timestamps agree with Date at every second of day boundaries, in any order, before 1970 too', () => {
  const reference = (instant: number) => new Date(instant + 8 * 3600 * 1000).toISOString().slice(0, 19);
  const instants = [Date.UTC(2026, 10, 22, 15, 59, 59, 999), Date.UTC(2026, 10, 22, 16), Date.UTC(2026, 10, 21, 23, 59, 59),
    Date.UTC(1969, 11, 31, 15, 59, 59, 500), 0, Date.UTC(2030, 0, 1, 12, 0, 0, 1)];
  for (let i = 0; i < 2000; i++) instants.push(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 400 * 86_400_000));
  for (const instant of [...instants, ...instants.reverse()]) assert.equal(formatLocalTimestamp(instant), reference(instant), String(instant));
});

test('local timestamps agree with Date for fractions of a millisecond, years outside 0000-9999 and instants Date refuses', () => {
  const reference = (instant: number) => new Date(instant + 8 * 3600 * 1000).toISOString().slice(0, 19);
  const outcome = (format: (instant: number) => string, instant: number) => {
    try { return format(instant); } catch (error) { return (error as Error).name; }
  };
  for (const instant of [-28_800_000.5, -1.5, 0.5, -0, Date.UTC(9999, 11, 31, 15, 59, 59), Date.UTC(9999, 11, 31, 16), Date.UTC(10_000, 0, 1),
    -62_167_248_000_000, -62_167_248_000_001, 8.64e15, 8.64e15 - 8 * 3600 * 1000 + 1000, -8.64e15 - 1, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.equal(outcome(formatLocalTimestamp, instant), outcome(reference, instant), String(instant));
  }
});

test('stored text is trimmed, within its length, and free of control characters; a line holds no tab or line break', () => {
  assert.equal(checkedText('title', '  Hello  ', { kind: 'line', max: 10 }), 'Hello');
  assert.equal(checkedText('body', 'one\n\ttwo\r\n', { kind: 'text', max: 20 }), 'one\n\ttwo');
  assert.equal(checkedText('bio', '   ', { kind: 'line', max: 5, min: 0 }), '');
  assert.throws(() => checkedText('title', '   ', { kind: 'line', max: 10 }), /title must be 1 to 10 characters/);
  assert.throws(() => checkedText('bio', 'x'.repeat(6), { kind: 'line', max: 5, min: 0 }), /bio must be at most 5 characters/);
  for (const control of ['\u0000', '\u0007', '\u001b', '\u007f']) {
    assert.throws(() => checkedText('body', `a${control}b`, { kind: 'text', max: 20 }), /body must not contain control characters/, JSON.stringify(control));
  }
  for (const lineBreak of ['\n', '\r', '\t']) {
    assert.throws(() => checkedText('title', `a${lineBreak}b`, { kind: 'line', max: 20 }), /title must not contain control characters/, JSON.stringify(lineBreak));
  }
});

test('half of a surrogate pair alone is stored as U+FFFD, as a form sends it; a whole pair is kept', () => {
  assert.equal(checkedText('title', 'a\ud800b\udc00c', { kind: 'line', max: 10 }), 'a\ufffdb\ufffdc');
  assert.equal(checkedText('title', '\udc00\ud800', { kind: 'line', max: 10 }), '\ufffd\ufffd', 'a pair in the wrong order is two halves');
  assert.equal(checkedText('title', 'emoji 😀 字', { kind: 'line', max: 20 }), 'emoji 😀 字');
  assert.equal(checkedText('title', 'x\ud83d', { kind: 'line', max: 10 }), 'x\ufffd');
});

test('a URI component carries half of a surrogate pair alone as U+FFFD, never an exception', () => {
  assert.equal(encodeComponent('a\ud800b'), 'a%EF%BF%BDb');
  assert.equal(encodeComponent('😀 \udc00'), '%F0%9F%98%80%20%EF%BF%BD');
});

test('usernames: 3 to 30 letters, digits, _ or -, starting and ending with a letter or digit', () => {
  for (const ok of ['abc', 'Ann_Lee', 'a-1', 'x'.repeat(30)]) assert.doesNotThrow(() => checkUsername(ok), ok);
  for (const bad of ['ab', 'x'.repeat(31), '_abc', 'abc-', 'a b', 'añb', 'a/b', '']) assert.throws(() => checkUsername(bad), bad);
});

test('passwords: 8 to 256 characters', () => {
  assert.doesNotThrow(() => checkPassword('12345678', 'ann'));
  assert.throws(() => checkPassword('1234567', 'ann'));
  assert.throws(() => checkPassword('x'.repeat(257), 'ann'));
});

test('a password is not the username, in any letter case, nor only spaces or control characters', () => {
  assert.throws(() => checkPassword('Ann_Lee_1', 'ann_lee_1'), /not be your username/);
  assert.throws(() => checkPassword(' annalee2 ', 'AnnaLee2'), /not be your username/);
  for (const blank of [
    ' '.repeat(8), '\t\n\r \t\n\r ', '\u200b'.repeat(8), '\u0001'.repeat(8), '\u00a0'.repeat(10), '\u3164'.repeat(8), '\u2800'.repeat(8),
    '\u0301'.repeat(8), '\ufe0f'.repeat(8), '\u034f'.repeat(8), '\u{1d159}'.repeat(8), '\u115f'.repeat(8),
  ]) {
    assert.throws(() => checkPassword(blank, 'ann'), /only spaces, control or invisible characters/, JSON.stringify(blank));
  }
  assert.doesNotThrow(() => checkPassword('  spaced out phrase  ', 'ann'));
});

test('names that would pass for the site or its staff are reserved, in any reading: case, _ or -, look-alike digits, staff words around them', () => {
  for (const name of [
    'admin', 'Admin', 'ad-min', 'ROOT', 'support', 'Community', 'svc', 'security', 'no_reply',
    'admin1', 'adm1n', '4dmin', 'r00t', 'supp0rt', 'support-team', 'official-support', 'security-team', 'sysadmin', 'superuser',
    'administrators', 'moderators', 'svc-admin', 'c0mmunity', 'communityteam', 'officia1',
  ]) {
    assert.equal(isReservedUsername(name), true, name);
  }
  for (const name of ['ann', 'admins-fan', 'rooted', 'demo', 'badminton', 'teamwork', 'helpful', 'mod3rn-art', 'user42']) {
    assert.equal(isReservedUsername(name), false, name);
  }
});

test('marks on one character are counted across the invisible characters between them: a description or a staff reason with more than 4, parted by a joiner, a word joiner, a tag or a Hangul filler, is refused; 4 so parted, an emoji and a keycap are kept', () => {
  const four = '\u0301\u0300\u0302\u0303';
  for (const invisible of ['\u200d', '\u200c', '\u2060', '\u{e0041}', '\u115f', '\u00ad']) {
    assert.throws(() => checkedText('description', `Reads x${(four + invisible).repeat(20)}`, { kind: 'paragraph', max: 500 }), /at most 4 combining marks/, JSON.stringify(invisible));
    assert.throws(() => checkedText('reason', `Because x${four}${invisible}\u0301.`, { kind: 'paragraph', max: 500 }), /at most 4 combining marks/, JSON.stringify(invisible));
    assert.equal(checkedText('description', `Reads x${four}${invisible}y`, { kind: 'paragraph', max: 500 }), `Reads x${four}${invisible}y`, JSON.stringify(invisible));
  }
  for (const kept of ['Family 👨\u200d👩\u200d👧', 'Press 1\ufe0f\u20e3', 'ཧྨྱཱཾ']) assert.equal(checkedText('description', kept, { kind: 'paragraph', max: 500 }), kept);
});

test('names (of apps, categories and passkeys) hold no direction marks, invisible characters or noncharacters; lines and app descriptions hold no direction overrides', () => {
  for (const sneaky of [
    '\u202e', '\u2066', '\u200b', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u061c', '\u3164', '\u206a', '\u{e0001}', '\u{e0041}',
    '\u034f', '\ufe0f', '\u180b', '\ufff9', '\u{1bca0}', '\u{1d173}', '\u2028', '\u2029', '\u0085',
    '\uffff', '\ufdd0', '\u{10fffe}',
  ]) {
    assert.throws(() => checkedText('name', `Good${sneaky}App`, { kind: 'name', max: 80 }), /must not contain control characters, direction marks or invisible characters/, JSON.stringify(sneaky));
  }
  assert.throws(() => checkedText('title', 'a\u202eb', { kind: 'line', max: 20 }), /must not contain control characters/);
  for (const override of ['\u202a', '\u202e', '\u2066', '\u2069']) {
    assert.throws(() => checkedText('description', `Reads${override} posts`, { kind: 'paragraph', max: 500 }), /must not contain control characters or direction overrides/, JSON.stringify(override));
  }
  assert.equal(checkedText('description', 'Two lines\nمرحبا', { kind: 'paragraph', max: 500 }), 'Two lines\nمرحبا', 'a paragraph keeps its line breaks and right-to-left letters');
  assert.equal(checkedText('title', 'Family 👨\u200d👩\u200d👧', { kind: 'line', max: 20 }), 'Family 👨\u200d👩\u200d👧', 'a joiner in an emoji is fine in a title');
  assert.equal(checkedText('name', 'مرحبا App', { kind: 'name', max: 80 }), 'مرحبا App', 'right-to-left letters are fine');
  for (const blank of ['\u2800\u2800', '...', '\u00a0\u2800']) {
    assert.throws(() => checkedText('name', blank, { kind: 'name', max: 80 }), /must contain a letter or a digit/, JSON.stringify(blank));
  }
});

test('redirect URIs to register: https, or http on a loopback host, no fragment', () => {
  assert.equal(redirectUriProblem('https://app.example/cb?x=1'), undefined);
  assert.equal(redirectUriProblem('http://127.0.0.1:8080/cb'), undefined);
  assert.equal(redirectUriProblem('http://[::1]/cb'), undefined);
  assert.equal(redirectUriProblem('http://localhost:3000/cb'), undefined);
  assert.match(redirectUriProblem('http://app.example/cb')!, /https/);
  assert.match(redirectUriProblem('https://app.example/cb#x')!, /fragment/);
  assert.match(redirectUriProblem('/relative')!, /absolute/);
  assert.match(redirectUriProblem('https://user:pw@app.example/cb')!, /credentials/);
  assert.match(redirectUriProblem('javascript:alert(1)')!, /https/);
});

/** The refusal `check` throws: its English message and the values its words quote. */
function refusalOf(check: () => unknown): { message: string; values: Record<string, unknown> } {
  try {
    check();
  } catch (error) {
    assert.ok(error instanceof InputError);
    return { message: error.message, values: error.problems[0]!.words!.values! };
  }
  throw new Error('it was accepted');
}

test('a refused redirect URI is quoted in its refusal in printable ASCII, cut to 200 characters, and the cut said outside the quotes; a short one whole', () => {
  const long = `https://app.example/cb?x=${'\u5b57'.repeat(20_000)}`;
  const cut = refusalOf(() => checkRedirectUris([long]));
  // 25 characters, then 19 whole %E5%AD%97 and the %E5 that fits: never a % cut from its digits.
  const kept = `https://app.example/cb?x=${'%E5%AD%97'.repeat(19)}%E5`;
  assert.equal(cut.values.uri, `${kept}…`, 'the words the page shows');
  // In the English message the cut is said after the quotes: "...", between them, would be taken for the address's own.
  assert.ok(cut.message.includes(`${JSON.stringify(kept)} (its first 200 characters)`), cut.message);
  assert.ok(cut.message.length < 400, `the English message too: ${cut.message.length} characters`);
  assert.match(cut.message, /^[\x20-\x7e]+$/, 'RFC 6749 5.2: error_description is printable ASCII');
  assert.equal(refusalOf(() => checkRedirectUris(['http://app.example/cb'])).values.uri, 'http://app.example/cb');
});

test('a list of redirect URIs is refused with a problem for each refused address, in the list\'s order, the good ones unnamed', () => {
  try {
    checkRedirectUris(['http://app.example/cb', 'https://app.example/ok', 'https://app.example/cb#frag']);
    assert.fail('it was accepted');
  } catch (error) {
    assert.ok(error instanceof InputError);
    assert.deepEqual(error.problems.map((p) => [p.field, p.words?.values?.uri]), [
      ['redirect_uris', 'http://app.example/cb'], ['redirect_uris', 'https://app.example/cb#frag'],
    ]);
  }
});

test('a refusal quotes no direction override or control character as written: it would reorder or hide the words around it on the page', () => {
  const overridden = refusalOf(() => checkRedirectUris(['https://app.example/\u202egpj.exe\u0007']));
  assert.equal(overridden.values.uri, 'https://app.example/%E2%80%AEgpj.exe%07');
  assert.ok(overridden.message.includes('"https://app.example/%E2%80%AEgpj.exe%07"'), overridden.message);
});

test('a refusal quotes a quote or backslash percent-encoded, so its English message escapes nothing between the quotes', () => {
  const quoted = refusalOf(() => checkRedirectUris(['https://app.example/"x\\y']));
  assert.equal(quoted.values.uri, 'https://app.example/%22x%5Cy');
  assert.ok(quoted.message.startsWith('redirect URI "https://app.example/%22x%5Cy" '), quoted.message);
});

test('a line for a terminal escapes what shows nothing or steers the text, and a backslash, and keeps emoji and every script as they are', () => {
  assert.equal(withInvisibleEscaped('pub\x1b[2J\nsvc: ok \u202e'), 'pub\\u{1b}[2J\\u{a}svc: ok \\u{202e}');
  assert.equal(withInvisibleEscaped('\\u{1b}'), '\\\\u{1b}', 'typed as text, it reads otherwise than an ESC');
  assert.equal(withInvisibleEscaped('用户 é ❤️ 👨\u200d👩\u200d👧 1\ufe0f\u20e3'), '用户 é ❤️ 👨\u200d👩\u200d👧 1\ufe0f\u20e3');
  assert.equal(withInvisibleEscaped('Pay\u200dpal'), 'Pay\\u{200d}pal', 'a joiner between letters hides a difference');
});

test('the address a refusal tells the developer to write, a host or a path, is cut to 200 characters as the refused one is', () => {
  const tail = 'a'.repeat(1900);
  const refusals = {
    'the default port left out': [refusalOf(() => checkRedirectUris([`https://app.example:443/${tail}`])), 'written'],
    'the scheme in lower case': [refusalOf(() => checkRedirectUris([`HTTPS://app.example/${tail}`])), 'written'],
    'the path without dot segments': [refusalOf(() => checkRedirectUris([`https://app.example/x/../${tail}`])), 'path'],
    'the host as a browser reads it': [refusalOf(() => checkRedirectUris([`https://APP${tail}.example/cb`])), 'host'],
    'the homepage host as a browser reads it': [refusalOf(() => checkClientDetails({ name: 'App', homepageUrl: `https://${tail}%2Eexample/` })), 'host'],
  } as const;
  for (const [rule, [refusal, value]] of Object.entries(refusals)) {
    const quoted = refusal.values[value] as string;
    assert.ok(quoted.length === 201 && quoted.endsWith('…'), `${rule}: ${quoted.length} characters`);
    assert.ok(refusal.message.length < 1000 && !refusal.message.includes('a'.repeat(201)), `${rule}: the English message is ${refusal.message.length} characters`);
  }
});

test('a native app may register its own private-use scheme, named by a reverse domain (RFC 8252 7.1); nothing outside ASCII (RFC 3986)', () => {
  assert.equal(redirectUriProblem('com.example.app:/oauth/cb'), undefined);
  assert.equal(redirectUriProblem('com.example.app:/oauth/cb?x=1'), undefined);
  for (const bad of ['myapp:/cb', 'data:text/html,x', 'file:///etc/passwd', 'http://evil.example/cb']) {
    assert.ok(redirectUriProblem(bad), bad);
  }
  assert.match(redirectUriProblem('https://app.example/ü')!, /outside ASCII/);
  assert.match(redirectUriProblem('https://bücher.example/cb')!, /outside ASCII/);
});

test('redirect URIs match as exact strings, with no normalisation', () => {
  const client = { redirectUris: ['https://app.example/cb'] };
  assert.equal(isRegisteredRedirectUri(client, 'https://app.example/cb'), true);
  for (const trick of [
    'https://app.example/cb/', 'https://APP.example/cb', 'https://app.example:443/cb', 'https://app.example/cb?x=1',
    'https://app.example/cb#', 'https://app.example@evil.example/cb', '//evil.example/cb', 'https://app.example/%63b',
    'https://app.example/cb/../cb', 'http://app.example/cb',
  ]) {
    assert.equal(isRegisteredRedirectUri(client, trick), false, trick);
  }
});

test('a loopback IP redirect URI matches on any port (RFC 8252 7.3), and nothing else changes', () => {
  const client = { redirectUris: ['http://127.0.0.1/callback', 'http://[::1]:9000/cb'] };
  assert.equal(isRegisteredRedirectUri(client, 'http://127.0.0.1:51234/callback'), true);
  assert.equal(isRegisteredRedirectUri(client, 'http://[::1]/cb'), true);
  assert.equal(isRegisteredRedirectUri(client, 'http://127.0.0.1:51234/other'), false);
  assert.equal(isRegisteredRedirectUri(client, 'http://127.0.0.1.evil.example/callback'), false);
  assert.equal(isRegisteredRedirectUri({ redirectUris: ['http://localhost/cb'] }, 'http://localhost:8080/cb'), false);
});

test('a loopback IP redirect URI stored with its scheme in capitals, before registration asked for lower case, still matches on any port (RFC 3986 3.1, RFC 8252 7.3); all else as written', () => {
  const client = { redirectUris: ['HTTP://127.0.0.1/callback', 'Http://[::1]:9000/cb'] };
  assert.equal(isRegisteredRedirectUri(client, 'HTTP://127.0.0.1:51234/callback'), true);
  assert.equal(isRegisteredRedirectUri(client, 'Http://[::1]/cb'), true);
  // The port alone may differ: the scheme is compared as written, as every other part is.
  for (const other of ['http://127.0.0.1:51234/callback', 'http://127.0.0.1/callback', 'HTTP://127.0.0.1:51234/other', 'HTTP://127.0.0.1:51234/callback#x',
    'HTTP://127.0.0.1:0/callback', 'HTTP://127.0.0.1:65536/callback', 'HTTP://u@127.0.0.1:5/callback', 'HTTPS://127.0.0.1:5/callback']) {
    assert.equal(isRegisteredRedirectUri(client, other), false, other);
  }
});

test('scope parameters parse to known scopes in canonical order, and report unknown ones', () => {
  assert.deepEqual(parseScope('posts:read openid profile:read posts:read'), { scopes: ['openid', 'profile:read', 'posts:read'], dropped: [] });
  assert.deepEqual(parseScope('profile:read write'), { unknown: ['write'] });
  assert.equal(parseScope('profile:read  posts:read'), undefined);
  assert.equal(parseScope(''), undefined);
  assert.equal(parseScope('a"b'), undefined);
  assert.equal(formatScope(['posts:read', 'profile:read']), 'profile:read posts:read');
});

test('per-address limits count an IPv4 address as itself and an IPv6 address by its /64 (RFC 6177)', () => {
  assert.equal(addressKey('203.0.113.9'), '203.0.113.9');
  assert.equal(addressKey('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:0db8:0001:0002::ffff'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'));
});

test('one address is one key however a proxy spells it: an IPv4-mapped address in hex or in full, an IPv6 address with a dotted tail', () => {
  for (const spelling of ['::ffff:cb00:7109', '0:0:0:0:0:ffff:203.0.113.9', '0::FFFF:203.0.113.9']) assert.equal(addressKey(spelling), '203.0.113.9', spelling);
  assert.equal(addressKey('2001::3:4:5:6:1.2.3.4'), '2001:0:3:4::/64', 'the dotted tail is two groups, so :: stands for one');
  assert.equal(addressKey('2001:0:3:4:5:6:1.2.3.4'), '2001:0:3:4::/64');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
});

test('an IPv4 client seen through a translator is counted as its IPv4 address: the well-known NAT64 prefix, IPv4-translated, IPv4-compatible and 6to4 addresses, not only mapped ones', () => {
  for (const spelling of ['64:ff9b::203.0.113.9', '64:ff9b::cb00:7109', '0064:FF9B:0:0:0:0:cb00:7109', '::ffff:0:203.0.113.9', '::203.0.113.9', '::cb00:7109', '2002:cb00:7109::1', '2002:cb00:7109:ffff:1:2:3:4']) {
    assert.equal(addressKey(spelling), '203.0.113.9', spelling);
    assert.equal(siteKey(spelling), '203.0.113.9', spelling);
  }
  assert.notEqual(addressKey('64:ff9b::198.51.100.7'), addressKey('64:ff9b::203.0.113.9'), 'two IPv4 clients behind one translator are two keys');
  assert.equal(addressKey('64:ff9b:1::cb00:7109'), '64:ff9b:1:0::/64', 'a network-specific prefix may put the IPv4 address elsewhere (RFC 6052 2.2)');
  assert.equal(addressKey('::'), '0:0:0:0::/64', 'the unspecified address is no IPv4 client');
  assert.equal(addressKey('::0.1.2.3'), '0:0:0:0::/64', '0.0.0.0/8 is no IPv4 client');
});

test('a share of the line to argon2 counts an IPv6 address by its site, the /48 a home user\'s /56 lies in; an IPv4 address as itself', () => {
  assert.equal(siteKey('2001:db8:1:100::1'), '2001:db8:1::/48');
  assert.equal(siteKey('2001:db8:1:1ff:a:b:c:d'), siteKey('2001:db8:1:100::1'), 'the 256 /64s of one /56 are one site');
  assert.notEqual(siteKey('2001:db8:2::1'), siteKey('2001:db8:1::1'));
  assert.equal(siteKey('203.0.113.9'), '203.0.113.9');
  assert.equal(siteKey('::ffff:cb00:7109'), '203.0.113.9');
});

test('a remembered consent holds a request only when it holds every scope asked; none held holds nothing', () => {
  assert.equal(holdsEveryScope('openid profile:read posts:read', ['openid', 'posts:read']), true);
  assert.equal(holdsEveryScope('openid profile:read', ['openid', 'posts:read']), false);
  assert.equal(holdsEveryScope('openid', []), true);
  assert.equal(holdsEveryScope('', []), true);
  assert.equal(holdsEveryScope('', ['openid']), false);
  assert.equal(holdsEveryScope(undefined, []), false);
  // A stored list is whole scopes separated by spaces: a prefix is not a scope.
  assert.equal(holdsEveryScope('profile:read', ['profile']), false);
});

test("OpenID's standard scopes: profile and offline_access are scopes; email, address and phone are dropped, never granted (INTERFACE section 3)", () => {
  assert.deepEqual(parseScope('openid profile email offline_access'), { scopes: ['openid', 'profile', 'offline_access'], dropped: ['email'] });
  assert.deepEqual(parseScope('phone address email'), { scopes: [], dropped: ['email', 'address', 'phone'] });
  assert.equal(formatScope(['offline_access', 'profile', 'openid', 'email']), 'openid profile offline_access');
});

test('a client registration lists the service scopes; profile follows profile:read, offline_access is always permitted', () => {
  assert.deepEqual([...REGISTERED_SCOPES], ['openid', 'profile:read', 'posts:read']);
  assert.deepEqual([...permittedScopes(REGISTERED_SCOPES)].sort(), ['offline_access', 'openid', 'posts:read', 'profile', 'profile:read']);
  assert.deepEqual([...permittedScopes(['openid'])].sort(), ['offline_access', 'openid']);
  assert.deepEqual([...permittedScopes(['openid', 'profile'])].sort(), ['offline_access', 'openid', 'profile']);
});
