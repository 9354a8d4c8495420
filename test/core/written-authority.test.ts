/**
 * `writtenAuthority`: the one reader of a URI's authority, which the rules for registered
 * addresses (`registeredUri`) and for homepages (`writesHostAsRead`) both compare with what a
 * browser reads. Plain unit tests: it splits where the WHATWG URL parser splits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writtenAuthority } from '../../src/core/oauth/clients.js';

test('a URI\'s authority is read as a browser splits it: its scheme as written, user information before the last @, the host up to a colon outside brackets, the port after it', () => {
  const cases: Array<[string, ReturnType<typeof writtenAuthority>]> = [
    ['https://app.example/cb', { scheme: 'https', written: 'app.example', userinfo: undefined, host: 'app.example', port: undefined, rest: '/cb' }],
    ['HTTPS://App.Example:443?x=1#f', { scheme: 'HTTPS', written: 'App.Example:443', userinfo: undefined, host: 'App.Example', port: '443', rest: '?x=1#f' }],
    ['https://app.example:', { scheme: 'https', written: 'app.example:', userinfo: undefined, host: 'app.example', port: '', rest: '' }],
    ['https://a@b@app.example:8080/cb', { scheme: 'https', written: 'a@b@app.example:8080', userinfo: 'a@b', host: 'app.example', port: '8080', rest: '/cb' }],
    ['https://@app.example/', { scheme: 'https', written: '@app.example', userinfo: '', host: 'app.example', port: undefined, rest: '/' }],
    ['http://[::1]:8080/cb', { scheme: 'http', written: '[::1]:8080', userinfo: undefined, host: '[::1]', port: '8080', rest: '/cb' }],
    ['http://[::1]/cb', { scheme: 'http', written: '[::1]', userinfo: undefined, host: '[::1]', port: undefined, rest: '/cb' }],
    ['http://[::1', { scheme: 'http', written: '[::1', userinfo: undefined, host: '[::1', port: undefined, rest: '' }],
    ['https:///cb', { scheme: 'https', written: '', userinfo: undefined, host: '', port: undefined, rest: '/cb' }],
    ['com.example.app://Bank.example/cb', { scheme: 'com.example.app', written: 'Bank.example', userinfo: undefined, host: 'Bank.example', port: undefined, rest: '/cb' }],
  ];
  for (const [uri, authority] of cases) assert.deepEqual(writtenAuthority(uri), authority, uri);
});

test('a browser ends an http(s) URI\'s authority at a backslash, which it reads as /; another scheme\'s it does not', () => {
  assert.deepEqual(writtenAuthority('https://evil.example\\@community.example/'),
    { scheme: 'https', written: 'evil.example', userinfo: undefined, host: 'evil.example', port: undefined, rest: '\\@community.example/' });
  assert.deepEqual(writtenAuthority('HTTP://evil.example:80\\x'), { scheme: 'HTTP', written: 'evil.example:80', userinfo: undefined, host: 'evil.example', port: '80', rest: '\\x' });
  assert.equal(writtenAuthority('com.example.app://a\\b/cb')?.host, 'a\\b');
});

test('a URI without // after its scheme has no authority', () => {
  for (const uri of ['com.example.app:/cb', 'https:app.example/cb', 'https:/app.example/cb', 'mailto:a@b.example', '/relative', '//app.example/cb', '']) {
    assert.equal(writtenAuthority(uri), undefined, uri);
  }
});

test('the host and port a browser reads are the written ones where the URL parser accepts the URI', () => {
  for (const uri of ['https://app.example:8443/cb', 'http://127.0.0.1:0/', 'http://[::1]:65535/', 'https://u:p@app.example:1/', 'https://app.example:/']) {
    const url = new URL(uri);
    const authority = writtenAuthority(uri)!;
    assert.equal(authority.host, url.hostname, uri);
    assert.equal(authority.port ?? '', url.port, uri);
  }
});
