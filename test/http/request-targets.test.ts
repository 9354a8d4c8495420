/**
 * What the service answers to request lines no browser sends, over a raw socket: the words of
 * each refusal say what is wrong with the request it refuses.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

test('an absolute-form target that is no URL is refused for what it is, not for a percent-escape it does not hold (RFC 9112 3.2.2)', async () => {
  for (const target of ['http://h:x@/api/open/v1/me', 'http://h/api/open/v1/me#f']) {
    const answer = await rawRequest('GET', t.baseUrl, [], undefined, { target });
    assert.equal(answer.status, 400, target);
    const { error, error_description: description } = JSON.parse(answer.body) as { error: string; error_description: string };
    assert.equal(error, 'invalid_request', target);
    assert.doesNotMatch(description, /percent/, target);
    assert.match(description, /absolute form/, target);
  }
  // A path whose escape is malformed, sent as a path or in an absolute-form URL, is told so.
  for (const target of ['/api/open/v1/%zz', 'http://h/api/open/v1/%zz']) {
    const answer = await rawRequest('GET', t.baseUrl, [], undefined, { target });
    assert.equal(answer.status, 400, target);
    assert.match(JSON.parse(answer.body).error_description, /malformed percent-escape/, target);
  }
});
