/** The methods the router's paths take, as the not-found answer reads them (`src/http/route-methods.ts`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RouteMethods } from '../../src/http/route-methods.js';

test('the server as a whole supports OPTIONS and every method some path takes, each once and sorted (RFC 9110 9.3.7)', () => {
  const methods = new RouteMethods();
  methods.add('/a', ['GET', 'HEAD', 'OPTIONS']);
  methods.add('/b/:id', 'POST');
  methods.add('/c', 'OPTIONS');
  methods.add('/d', 'GET');
  assert.deepEqual(methods.ofServer(), ['GET', 'HEAD', 'OPTIONS', 'POST']);
});
