/**
 * attack107 F2: the password of an absolute-form target's userinfo (RFC 9112 3.2.2,
 * `GET http://user:password@host/api/… HTTP/1.1`, which Node accepts and the router routes by
 * its path) was written to the log as sent, in every request's `req.url`: a client that talks to
 * the service as to a proxy with its credentials in the URL left them in the log. RFC 9110
 * 4.2.4 deprecates userinfo in http(s) URIs; the log keeps that there was one, never what it was.
 * So do the spans exported to a trace collector (`http.target`, `url.full`…), which kept the URL
 * but its query.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { redactUrl } from '../../src/http/logging.js';
import { redactingExporter } from '../../src/observability/span-redaction.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';

test('redactUrl redacts the userinfo of an absolute-form target, whether or not it is a URL, and keeps the rest', () => {
  assert.equal(redactUrl('http://user:SECRET_PW@x/api/x?code=C&a=1'), 'http://[redacted]@x/api/x?code=[redacted]&a=1');
  assert.equal(redactUrl('HTTPS://SECRET_PW@%zz/api/x'), 'HTTPS://[redacted]@%zz/api/x');
  assert.equal(redactUrl('http://a@b:SECRET_PW@x'), 'http://[redacted]@x');
  // attack108: a target that is no URL, its password holding a raw `/`, `?` or `#`.
  assert.equal(redactUrl('http://u:SECRET/PW@h/admin'), 'http://[redacted]@h/admin');
  assert.equal(redactUrl('http://u:SECRET?PW@h/admin'), 'http://[redacted]@h/admin');
  assert.equal(redactUrl('http://u:SE#CRET@h/admin'), 'http://[redacted]@h/admin');
  // An @ after the authority of a URL is no userinfo.
  assert.equal(redactUrl('http://x/api/a@b?c=d@e'), 'http://x/api/a@b?c=d@e');
  assert.equal(redactUrl('/api/a@b'), '/api/a@b');
});

test('a span\'s URL attributes lose the userinfo of an absolute-form target, as they lose its query', () => {
  const exported: ReadableSpan[] = [];
  const sink = { export: (spans: ReadableSpan[]) => { exported.push(...spans); }, shutdown: async () => {} } as unknown as SpanExporter;
  const attributes: Record<string, unknown> = {
    'http.target': 'http://someone:SECRET_PW@x/api/open/v1/me?code=C', 'url.full': 'http://SECRET_PW@x/login', 'url.path': 'http://a:SECRET_PW@%zz/api/x', 'http.route': '/api/open/v1/me',
  };
  redactingExporter(sink).export([{ attributes, events: [] } as unknown as ReadableSpan], () => {});
  assert.deepEqual(exported[0]!.attributes, {
    'http.target': 'http://[redacted]@x/api/open/v1/me', 'url.full': 'http://[redacted]@x/login', 'url.path': 'http://[redacted]@%zz/api/x', 'http.route': '/api/open/v1/me',
  });
});

forEachDatabase('attack107 F2: userinfo of an absolute-form target in the log', (database) => {
  const lines: string[] = [];
  let t: TestApp;
  before(async () => { t = await startTestApp(database, { logLines: lines }); });
  after(() => t.close());

  test('no log line carries the password of an absolute-form target, a URL or not', async () => {
    const { host } = new URL(t.baseUrl);
    for (const target of [`http://someone:SECRET_PW_1@${host}/api/open/v1/me`, `http://someone:SECRET_PW_2@%zz/api/x`, `http://SECRET_PW_3@${host}/login`, `http://u:SECRET_PW_4/x@${host}/admin`]) {
      const answer = await rawRequest('GET', t.baseUrl, [], undefined, { target });
      assert.ok(answer.status >= 200 && answer.status < 500, target);
    }
    const logged = lines.join('');
    assert.match(logged, /\[redacted\]@/);
    assert.doesNotMatch(logged, /SECRET_PW/);
  });
});
