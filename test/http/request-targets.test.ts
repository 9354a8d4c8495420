/**
 * What the service answers to request lines no browser sends, over a raw socket: the words of
 * each refusal say what is wrong with the request it refuses.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { rawRequest } from '../support/raw-request.js';
import { answersIn, exchange } from '../support/raw-socket.js';

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(() => t.close());

/** The one answer to `bytes`, sent on a connection of their own. */
async function only(bytes: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const answers = answersIn((await exchange(t.baseUrl, bytes)).text);
  assert.equal(answers.length, 1);
  return answers[0]!;
}

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

test('a request line of another HTTP version is a page saying the version is not supported (RFC 9110 15.6.6), in the reader\'s language; JSON keeps its shape', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  for (const [language, heading, words] of [['en', 'HTTP version not supported', 'HTTP/1.1'], ['zh-CN', '不支持该 HTTP 版本', '请改用 HTTP/1.1'], ['zh-TW', '不支援此 HTTP 版本', '請改用 HTTP/1.1']] as const) {
    const page = await only(`GET /login HTTP/2.0\r\n${host}Accept-Language: ${language}\r\n\r\n`);
    assert.equal(page.status, 505);
    assert.match(page.body, new RegExp(`<h1>${heading}</h1>\\s*<p>[^<]*${words.replaceAll('.', '\\.')}`), language);
    assert.match(page.body, new RegExp(`<title>${heading} · `), language);
  }
  const api = await only(`GET /api/open/v1/me HTTP/2.0\r\n${host}\r\n`);
  assert.equal(api.status, 505);
  assert.match(api.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(JSON.parse(api.body)), ['error', 'error_description']);
});

test('OPTIONS * is answered for the server as a whole (RFC 9110 9.3.7): 204 with the methods it supports in Allow, no body, the security headers, the connection kept', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  const { text } = await exchange(t.baseUrl, `OPTIONS * HTTP/1.1\r\n${host}\r\nGET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
  const [options, next] = answersIn(text);
  assert.equal(options?.status, 204);
  assert.equal(options.body, '');
  const allowed = (options.headers.get('allow') ?? '').split(', ');
  for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST']) assert.ok(allowed.includes(method), `Allow: ${allowed.join(', ')}`);
  assert.ok(!allowed.includes('CONNECT') && !allowed.includes('TRACE'), 'no method no address takes');
  assert.equal(options.headers.get('x-content-type-options'), 'nosniff');
  assert.match(options.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.equal(next?.status, 200, 'the next request on the connection is answered');
  // The asterisk is OPTIONS' alone, and still asks for a Host (RFC 9112 3.2).
  assert.equal((await only('OPTIONS * HTTP/1.1\r\nConnection: close\r\n\r\n')).status, 400);
});

test('a path under /static that climbs out of its folder is refused with a page, as every address outside the API is, in the reader\'s language', async () => {
  for (const target of ['/static/../..', '/static/%2e%2e/', '/static/..%5c..']) {
    const answer = await rawRequest('GET', t.baseUrl, ['Accept-Language', 'zh-CN'], undefined, { target });
    assert.equal(answer.status, 403, target);
    assert.match(String(answer.headers['content-type']), /^text\/html/, target);
    assert.match(answer.body, /<html lang="zh-CN"/, target);
    assert.match(String(answer.headers['content-security-policy']), /frame-ancestors 'none'/, target);
  }
  // The folder's files are served as before.
  assert.equal((await fetch(`${t.baseUrl}/static/style.css`)).status, 200);
});

test('an address under /static that is no file of the site (a .. climbing out of its folder, a NUL) is refused in the catalog\'s words saying so, in the reader\'s language, English too: not as a request not understood, nor as one an app sent, nor in the developer\'s description', async () => {
  for (const [target, status] of [['/static/../package.json', 403], ['/static/%2e%2e/%2e%2e/etc/passwd', 403], ['/static/style.css%00', 400]] as const) {
    const english = await rawRequest('GET', t.baseUrl, ['Accept-Language', 'en'], undefined, { target });
    assert.equal(english.status, status, target);
    assert.match(english.body, /<h1>That did not work<\/h1>\s*<p>No file of this site is at this address: it leads out of the folder of the site&#39;s files, or holds a character no file name has\.<\/p>/, target);
    assert.doesNotMatch(english.body, /The address (leads out|holds a NUL)/, `${target}: not the developer's description`);
    const chinese = await rawRequest('GET', t.baseUrl, ['Accept-Language', 'zh-CN'], undefined, { target });
    assert.equal(chinese.status, status, target);
    assert.match(chinese.body, /<p>这个地址没有本站的文件/, target);
    assert.doesNotMatch(chinese.body, /应用/, target);
  }
});

test('OPTIONS in absolute form with an empty path and no query asks about the server as a whole, as OPTIONS * does (RFC 9112 3.2.4): a proxy would forward it as OPTIONS *', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  const server = await only(`OPTIONS * HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
  for (const target of ['http://h', `https://${new URL(t.baseUrl).host}`]) {
    const answer = await only(`OPTIONS ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    assert.equal(answer.status, 204, target);
    assert.equal(answer.headers.get('allow'), server.headers.get('allow'), target);
  }
  // A path or a query names a resource: it is asked about, not the server.
  for (const target of ['http://h/', 'http://h?x', 'http://h/login']) {
    assert.notEqual((await only(`OPTIONS ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)).status, 204, target);
  }
});

test('a target in absolute form that is no http or https URL with a host is refused as one, not answered as a page that is not there (RFC 9112 3.2.2, RFC 9110 4.2 and 7.4)', async () => {
  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  // (One without `//`, `mailto:x` or `http:/login`, Node's parser refuses itself as malformed HTTP, before the app.)
  for (const target of ['ftp://host/', 'foo://bar/login', 'FTP://host']) {
    const page = await only(`GET ${target} HTTP/1.1\r\n${host}Accept-Language: zh-CN\r\nConnection: close\r\n\r\n`);
    assert.equal(page.status, 400, target);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/, target);
    assert.match(page.body, /<html lang="zh-CN"/, target);
    assert.match(page.body, /<h1>操作没有成功<\/h1>\s*<p>无法处理这个请求/, target);
  }
  // By the path it names, as the router's refusals of an absolute-form target are (`pathOfTarget`): JSON under /api/.
  for (const target of ['foo://bar/api/open/v1/me', 'FTP://host/api/oauth/userinfo']) {
    const api = await only(`GET ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    assert.equal(api.status, 400, target);
    assert.deepEqual(JSON.parse(api.body), {
      error: 'invalid_request',
      error_description: 'The request target is in absolute form but is no http or https URL with a host and without a fragment (RFC 9112 3.2.2).',
    }, target);
  }
  // An http URL in absolute form is served by its path, as before.
  assert.equal((await only(`GET http://h/healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)).status, 200);
});

test('a Range that begins past the end of a file under /static is 416 with Content-Range and a page saying so in the catalog\'s words of the reader\'s language, English too, not a request not understood (RFC 9110 15.5.17, 14.4)', async () => {
  const size = statSync(new URL('../../public/style.css', import.meta.url)).size;
  for (const [language, words] of [
    ['en', /<h1>That did not work<\/h1>\s*<p>The part of this file that was asked for begins past its end: the file is shorter than that\. Load it again whole\.<\/p>/],
    ['zh-CN', /<p>请求的这部分内容超出了文件的末尾/],
    ['zh-TW', /<p>請求的這部分內容超出了檔案的結尾/],
  ] as const) {
    const answer = await rawRequest('GET', `${t.baseUrl}/static/style.css`, ['Range', `bytes=${size + 10}-`, 'Accept-Language', language]);
    assert.equal(answer.status, 416, language);
    assert.equal(answer.headers['content-range'], `bytes */${size}`, language);
    assert.match(String(answer.headers['content-type']), /^text\/html/, language);
    assert.match(answer.body, new RegExp(`<html lang="${language}"`), language);
    assert.match(answer.body, words, language);
  }
  // A Range within the file is served as before.
  assert.equal((await rawRequest('GET', `${t.baseUrl}/static/style.css`, ['Range', 'bytes=0-9'])).status, 206);
});

test('a condition a file under /static no longer meets (If-Match, If-Unmodified-Since) is 412 with a page saying so in the catalog\'s words of the reader\'s language, English too, not a request not understood (RFC 9110 13.1.1, 13.1.4, 15.5.13)', async () => {
  for (const condition of [['If-Match', '"not-its-etag"'], ['If-Unmodified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT']]) {
    for (const [language, words] of [
      ['en', /<h1>That did not work<\/h1>\s*<p>This file has changed since the version your browser asked about\. Load it again\.<\/p>/],
      ['zh-CN', /<p>自你的浏览器所问的那个版本以来，这个文件已经改变/],
      ['zh-TW', /<p>自你的瀏覽器所問的那個版本以來，這個檔案已經變更/],
    ] as const) {
      const answer = await rawRequest('GET', `${t.baseUrl}/static/style.css`, [...condition, 'Accept-Language', language]);
      assert.equal(answer.status, 412, `${condition[0]} ${language}`);
      assert.match(answer.body, new RegExp(`<html lang="${language}"`), language);
      assert.match(answer.body, words, `${condition[0]} ${language}`);
    }
  }
  // A condition the file meets is served as before.
  const { etag } = (await rawRequest('GET', `${t.baseUrl}/static/style.css`, [])).headers;
  assert.equal((await rawRequest('GET', `${t.baseUrl}/static/style.css`, ['If-Match', String(etag)])).status, 200);
});
