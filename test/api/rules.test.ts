/** Pure rules of the resource API: paging parameters, the Authorization header. (Excerpts: test/core/markdown.test.ts.) */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearerToken } from '../../src/core/api/bearer.js';
import { OAuthError } from '../../src/core/errors.js';
import { parsePaging } from '../../src/core/api/views.js';

test('paging defaults to page 0 and size 20', () => {
  assert.deepEqual(parsePaging({}), { page: 0, size: 20 });
});

test('a size above 50 is 50', () => {
  assert.deepEqual(parsePaging({ page: '3', size: '51' }), { page: 3, size: 50 });
  assert.deepEqual(parsePaging({ size: '50' }), { page: 0, size: 50 });
  assert.deepEqual(parsePaging({ size: '1' }), { page: 0, size: 1 });
});

test('paging refuses anything but digits, and a size of 0', () => {
  for (const query of [{ page: '-1' }, { page: '1.0' }, { page: '' }, { page: ['1', '2'] }, { size: '0' }, { size: ' 5' }, { size: '0x10' }, { page: '1234567890' }]) {
    assert.throws(() => parsePaging(query), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_request', JSON.stringify(query));
  }
});

test('a paging refusal names the parameter and what it takes, or that it was repeated', () => {
  const refusal = (query: Record<string, unknown>) => {
    try { parsePaging(query); } catch (error) { return (error as OAuthError).description; }
    assert.fail(JSON.stringify(query));
  };
  assert.equal(refusal({ page: '-1' }), 'page must be a whole number from 0 to 999999999, in digits only (got \'-1\').');
  assert.equal(refusal({ size: '0' }), 'size must be a whole number from 1 to 999999999, in digits only (got \'0\').');
  assert.equal(refusal({ page: ['0', '1'] }), 'page was given more than once: send it once.');
  assert.match(refusal({ size: 'x'.repeat(5000) }), /^size must .*\(got 'x{20}'\)\.$/, 'what it echoes is short');
});

test('a paging refusal quotes the value sent in the characters RFC 6749 5.2 and RFC 6750 3 allow an error_description: no quote, no backslash, nothing past printable ASCII', () => {
  for (const sent of ['"1"', '1\\', '\u00e91', '\n1', '1"\\\u4e00']) {
    let description = '';
    try { parsePaging({ page: sent }); } catch (error) { description = (error as OAuthError).description; }
    assert.match(description, /^page must be a whole number/, JSON.stringify(sent));
    assert.match(description, /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/, JSON.stringify(sent));
  }
});

test('the Authorization header yields the bearer token, nothing for no header, null for another shape', () => {
  assert.equal(bearerToken(undefined), undefined);
  assert.equal(bearerToken(''), undefined);
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('BEARER  abc'), 'abc');
  assert.equal(bearerToken('Bearer'), null);
  assert.equal(bearerToken('Bearer a b'), null);
  assert.equal(bearerToken('Basic abc'), null);
});
