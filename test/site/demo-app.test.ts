/**
 * The demo app's own behaviour, without the service (a stand-in answers only discovery, so a
 * sign-in starts): it is a plugin that needs only cookies and form bodies. Its end-to-end flow against the service is tested once the OAuth endpoints exist.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { demoApp } from '../../src/demo-app/plugin.js';
import { englishSentences } from '../i18n/untranslated.js';

let configured: FastifyInstance;
let unconfigured: FastifyInstance;
/** Configured with `issuer`, which answers discovery: a sign-in starts, with a state. */
let signingIn: FastifyInstance;
/** Where `signingIn` listens, for what is asked over real HTTP. */
let signingInUrl: string;
/** A service that answers only discovery (OpenID Connect Discovery 1.0 section 4). */
let issuer: Server;

async function build(demo: Parameters<typeof demoApp>[1]['demo']): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(cookie);
  await app.register(formbody);
  await app.register(demoApp, { demo });
  return app;
}

before(async () => {
  // Port 9 (discard) on loopback: nothing answers, so discovery fails fast.
  configured = await build({ issuer: 'http://127.0.0.1:9', clientId: 'demo', clientSecret: 'svcs_x', redirectUri: 'http://127.0.0.1:9/demo-app/callback' });
  unconfigured = await build(undefined);
  issuer = createServer((_request, response) => {
    const base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ issuer: base, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`, jwks_uri: `${base}/jwks` }));
  });
  await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
  const issuerUrl = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
  signingIn = await build({ issuer: issuerUrl, clientId: 'demo', clientSecret: 'svcs_x', redirectUri: 'http://127.0.0.1:9/demo-app/callback' });
  signingInUrl = await signingIn.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await configured.close();
  await unconfigured.close();
  await signingIn.close();
  await new Promise((resolve) => issuer.close(resolve));
});

/** A sign-in started in a new browser: its session cookie and the state the service is to send back. */
async function signInStarted(): Promise<{ cookie: string; state: string }> {
  const response = await fetch(`${signingInUrl}/demo-app/login`, { redirect: 'manual' });
  assert.equal(response.status, 303);
  const state = new URL(response.headers.get('location')!).searchParams.get('state')!;
  return { cookie: response.headers.get('set-cookie')!.split(';')[0]!, state };
}

/** The demo app's page for the service's answer `query` to a sign-in it started, with its state. */
async function answered(query: string, language = 'en'): Promise<string> {
  const { cookie, state } = await signInStarted();
  const response = await fetch(`${signingInUrl}/demo-app/callback?${query}&state=${state}`, { headers: { cookie, 'accept-language': language } });
  assert.equal(response.status, 400);
  return response.text();
}

test('the demo app says it is an example and offers sign-in', async () => {
  const response = await configured.inject('/demo-app');
  assert.equal(response.statusCode, 200);
  assert.match(response.body, /This is an example third-party application/);
  assert.match(response.body, /href="\/demo-app\/login"/);
  const cookieHeader = String(response.headers['set-cookie']);
  assert.match(cookieHeader, /^demo_app_session=/);
  assert.match(cookieHeader, /HttpOnly/);
  assert.match(cookieHeader, /Path=\/demo-app/);
});

test('the demo app without credentials explains how to get them', async () => {
  const response = await unconfigured.inject('/demo-app');
  assert.equal(response.statusCode, 200);
  assert.match(response.body, /demo-credentials\.json/);
  assert.equal((await unconfigured.inject('/demo-app/login')).statusCode, 303);
});

test('a callback the demo app did not start is refused', async () => {
  const response = await configured.inject('/demo-app/callback?code=abc&state=forged');
  assert.equal(response.statusCode, 400);
  assert.match(response.body, /was not started here/);
});

test('a callback with an error shows it, escaped', async () => {
  assert.match(await answered('error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E'), /\(error code: access_denied; Community said: &lt;b&gt;no&lt;\/b&gt;\)/);
  assert.match(await answered('error=made_up&error_description=%3Cb%3Eno%3C%2Fb%3E'), /made_up \(Community said: &lt;b&gt;no&lt;\/b&gt;\)/, 'a code of no standard is shown as it came');
});

test('the service\'s error and error_description, right-to-left, are isolated (<bdi>, UAX #9): they reorder nothing around them, and no direction control escapes them', async () => {
  /** The alert's sentence with each `<bdi>` taken out, and what the `<bdi>`s held. */
  const alert = (body: string) => {
    const sentence = /<p role="alert">([\s\S]*?)<\/p>/.exec(body)?.[1] ?? '';
    return { outside: sentence.replace(/<bdi>[^<]*<\/bdi>/g, ''), isolated: [...sentence.matchAll(/<bdi>([^<]*)<\/bdi>/g)].map((m) => m[1]) };
  };
  const rightToLeft = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
  for (const language of ['en', 'zh-CN', 'zh-TW']) {
    // Arabic then digits: unisolated, the digits and the closing bracket would be read as part of the Arabic.
    const arabic = alert(await answered(`error=access_denied&error_description=${encodeURIComponent('مرفوض 42')}`, language));
    assert.deepEqual(arabic.isolated, ['مرفوض 42'], language);
    assert.doesNotMatch(arabic.outside, rightToLeft, language);
    // An override, an isolate's end and a closing tag of its own inside a Hebrew description, and a code of no standard in Hebrew.
    const hostile = alert(await answered(`error=${encodeURIComponent('שגיאה')}&error_description=${encodeURIComponent('\u202eשלום\u2069</bdi>\u202c no')}`, language));
    assert.deepEqual(hostile.isolated, ['שגיאה', 'שלום&lt;/bdi&gt; no'], language);
    assert.doesNotMatch(hostile.outside, rightToLeft, language);
  }
});

test('an error callback without the state of the sign-in this browser started shows nothing it carries, and leaves that sign-in under way (RFC 6749 10.12)', async () => {
  const { cookie, state } = await signInStarted();
  for (const forged of ['', '&state=forged']) {
    const response = await fetch(`${signingInUrl}/demo-app/callback?error=access_denied&error_description=Call+us+now${forged}`, { headers: { cookie } });
    assert.equal(response.status, 400);
    const body = await response.text();
    assert.match(body, /was not started here/, forged);
    assert.doesNotMatch(body, /Call us now|access_denied/, forged);
  }
  const answer = await fetch(`${signingInUrl}/demo-app/callback?error=access_denied&state=${state}`, { headers: { cookie } });
  assert.match(await answer.text(), /you chose not to let the app use your account/, 'the sign-in under way still takes its answer');
});

test('a callback with a standard error code says what happened in the reader\'s words, with the code kept for developers', async () => {
  const read = answered;
  const chinese = await read('error=access_denied', 'zh-CN');
  assert.match(chinese, /登录未完成：你没有允许应用使用你的账号，或社区拒绝了这次请求（错误代码：access_denied）。/);
  assert.match(await read('error=access_denied', 'zh-TW'), /登入未完成：你沒有允許應用程式使用你的帳號，或社群拒絕了這次請求（錯誤代碼：access_denied）。/);
  assert.match(await read('error=temporarily_unavailable', 'en'), /Sign-in did not complete: Community is busy or under maintenance; try again in a few minutes \(error code: temporarily_unavailable\)\./);
  assert.match(await read('error=login_required&error_description=%3Cb%3Eno%3C%2Fb%3E', 'en'),
    /you are not signed in to Community, and the app asked it not to show its sign-in page \(error code: login_required; Community said: &lt;b&gt;no&lt;\/b&gt;\)/);
});

test('the demo app refuses a logout token it cannot verify, and one that is missing', async () => {
  const missing = await configured.inject({ method: 'POST', url: '/demo-app/backchannel-logout', payload: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(missing.statusCode, 400);
  const forged = await configured.inject({ method: 'POST', url: '/demo-app/backchannel-logout', payload: 'logout_token=a.b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(forged.statusCode, 400);
  assert.equal(forged.headers['cache-control'], 'no-store');
});

test('a callback with an empty error says the service gave no reason; control and invisible characters are not shown', async () => {
  for (const error of ['', '%20', '%E2%80%8B', '%00%0A']) {
    const body = await answered(`error=${error}&error_description=ignored`);
    assert.match(body, /Sign-in did not complete, and the service gave no reason\./, error);
    assert.doesNotMatch(body, /ignored|complete: \./, error);
  }
  const described = await answered('error=a%00b&error_description=%20%E2%80%8B');
  assert.match(described, /Sign-in did not complete: ab\./);
  assert.doesNotMatch(described, /\u0000|\u200b/);
});

test('a return from signing out that the demo app did not start, to a member not signed in to it, says only that', async () => {
  const response = await configured.inject('/demo-app/signed-out?state=forged');
  assert.equal(response.statusCode, 200);
  assert.match(response.body, /You are not signed in to the demo app\./);
  assert.doesNotMatch(response.body, /You are signed out of the demo app and of Community|role="alert"/);
});

test('the demo app reports a service it cannot discover', async () => {
  const response = await configured.inject('/demo-app/login');
  assert.equal(response.statusCode, 502);
  assert.match(response.body, /could not read the service’s OpenID configuration/);
});

test('the demo app speaks the browser\'s language: every page of it in Chinese, English for a browser that asks for none it has', async () => {
  const pages = [
    { app: configured, url: '/demo-app' },
    { app: unconfigured, url: '/demo-app' },
    { app: configured, url: '/demo-app/callback?code=abc&state=forged' },
    { app: configured, url: '/demo-app/signed-out?state=forged' },
    { app: configured, url: '/demo-app/login' },
  ];
  for (const [language, locale] of [['zh-CN,zh;q=0.9,en;q=0.5', 'zh-CN'], ['zh-TW', 'zh-TW']] as const) {
    for (const { app, url } of pages) {
      const response = await app.inject({ url, headers: { 'accept-language': language } });
      assert.match(response.body, new RegExp(`<html lang="${locale}">`), url);
      assert.equal(response.headers['content-language'], locale, url);
      assert.match(String(response.headers.vary), /Accept-Language/, url);
      assert.deepEqual(englishSentences(response.body, ['OpenID Connect', 'npm start']), [], `${locale} ${url}`);
    }
    for (const query of ['error=access_denied&error_description=no', 'error=']) {
      const body = await answered(query, language);
      assert.match(body, new RegExp(`<html lang="${locale}">`), query);
      assert.deepEqual(englishSentences(body, ['OpenID Connect', 'npm start']), [], `${locale} ${query}`);
    }
  }
  // The service's error_description is English ASCII (RFC 6749 4.1.2.1): marked so in Chinese, as the library's words are.
  const described = await answered('error=access_denied&error_description=The+user+denied+the+request.', 'zh-CN');
  assert.match(described, /登录未完成：.+（错误代码：access_denied；社区给出的说明，英文：The user denied the request\.）。/);
  const english = await configured.inject({ url: '/demo-app', headers: { 'accept-language': 'fr' } });
  assert.match(english.body, /<html lang="en">[\s\S]*This is an example third-party application/);
});
