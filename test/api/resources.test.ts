/**
 * The resource API's answers (seed tables 2.2–2.5, INTERFACE section 7): each field's name, type
 * and format, nothing else, the same as the OpenAPI document says; paging; headers; 404s.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writePost } from '../../src/core/community/posts.js';
import type { User } from '../../src/core/accounts/ports.js';
import { formatLocalTimestamp } from '../../src/core/time.js';
import { MCP_PATH } from '../../src/core/api/resource.js';
import { generateToken } from '../../src/core/credentials/formats.js';
import { type TestApp, startTestApp } from '../support/app.js';
import { rawRequest } from '../support/raw-request.js';
import { answersIn, exchange } from '../support/raw-socket.js';
import { forEachDatabase } from '../support/databases.js';
import { get, newAccessToken, newPersonalToken, newUser } from './fixtures.js';
import { checkAgainstSchema, successSchema } from './schema-check.js';

const LOCAL_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

forEachDatabase('resource API answers', (database) => {
  let t: TestApp;
  let openapi: Record<string, unknown>;

  before(async () => {
    t = await startTestApp(database);
    openapi = await (await fetch(`${t.baseUrl}/api/open/v1/openapi.json`)).json() as Record<string, unknown>;
  });
  after(() => t.close());

  const post = (author: User, fields: { title?: string; body?: string; status?: 'published' | 'draft'; category?: string } = {}) =>
    writePost(t.deps.stores, t.clock, {
      authorId: author.id, title: fields.title ?? 'A title', body: fields.body ?? 'Some words.',
      category: fields.category ?? 'General', status: fields.status ?? 'published',
    });

  const json = async (response: Response) => {
    assert.equal(response.status, 200, await response.clone().text());
    return response.json() as Promise<Record<string, unknown>>;
  };

  test('GET /me answers exactly the fields of seed table 2.2, with their types and formats', async () => {
    const user = await newUser(t.deps, { bio: 'Hello there', member: true, level: 4, xp: 321 });
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    const profile = await json(await get(t.baseUrl, '/api/open/v1/me', { token }));
    assert.deepEqual(Object.keys(profile).sort(), ['avatarUrl', 'bio', 'createdAt', 'id', 'level', 'member', 'profileUrl', 'username', 'xp']);
    assert.deepEqual(profile, {
      id: user.id,
      username: user.username,
      avatarUrl: `${t.baseUrl}/avatars/${user.id}`,
      bio: 'Hello there',
      member: true,
      level: 4,
      xp: 321,
      profileUrl: `${t.baseUrl}/u/${user.username}`,
      createdAt: formatLocalTimestamp(user.createdAt),
    });
    assert.equal(typeof profile.id, 'number');
    assert.ok(Number.isInteger(profile.level) && Number.isInteger(profile.xp));
    assert.match(profile.createdAt as string, LOCAL_TIMESTAMP);
  });

  test('createdAt is the UTC+8 local time without offset', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'profile:read');
    const profile = await json(await get(t.baseUrl, '/api/open/v1/me', { token }));
    // The test clock is 2026-11-22T00:30:48Z, which is 08:30:48 in UTC+8.
    assert.equal(profile.createdAt, '2026-11-22T08:30:48');
  });

  test('the profile has an empty bio when none is set, and never e-mail or status', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const profile = await json(await get(t.baseUrl, '/api/open/v1/me', { token }));
    assert.equal(profile.bio, '');
    for (const hidden of ['email', 'status', 'passwordHash', 'updatedAt']) assert.equal(hidden in profile, false, hidden);
  });

  test('GET /me/posts answers the envelope of seed table 2.4 with items of table 2.3', async () => {
    const user = await newUser(t.deps);
    const created = await post(user, { title: 'Hello', body: '# Heading\n\nSome **bold** and a [link](https://x.example).', category: 'News' });
    const { token } = await newAccessToken(t.deps, user, 'posts:read');
    const page = await json(await get(t.baseUrl, '/api/open/v1/me/posts', { token }));
    assert.deepEqual(Object.keys(page).sort(), ['items', 'page', 'size', 'totalElements', 'totalPages']);
    assert.deepEqual(page, {
      items: [{
        id: created.id,
        title: 'Hello',
        excerpt: 'Heading Some bold and a link.',
        url: `${t.baseUrl}/posts/${created.id}`,
        categoryName: 'News',
        createdAt: '2026-11-22T08:30:48',
        likeCount: 0,
        commentCount: 0,
        viewCount: 0,
      }],
      page: 0,
      size: 20,
      totalElements: 1,
      totalPages: 1,
    });
  });

  test('only the token user\'s published posts are listed: no drafts, nobody else\'s', async () => {
    const user = await newUser(t.deps);
    const other = await newUser(t.deps);
    const published = await post(user);
    await post(user, { status: 'draft' });
    await post(other);
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    const page = await json(await get(t.baseUrl, '/api/open/v1/me/posts', { token }));
    assert.deepEqual((page.items as Array<{ id: number }>).map((i) => i.id), [published.id]);
    assert.equal(page.totalElements, 1);
  });

  test('the excerpt is plain text of at most 140 characters, cut at a word with "…"', async () => {
    const user = await newUser(t.deps);
    const body = `# ${'**word** '.repeat(60)}\n\n*end*`;
    await post(user, { body });
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    const page = await json(await get(t.baseUrl, '/api/open/v1/me/posts', { token }));
    const { excerpt } = (page.items as Array<{ excerpt: string }>)[0]!;
    assert.ok(excerpt.length <= 140, `${excerpt.length}`);
    assert.ok(excerpt.endsWith('word…'), excerpt);
    assert.doesNotMatch(excerpt, /[#*]/);
  });

  test('the excerpt is the one stored when the post was written, never made when the list is read', async () => {
    const user = await newUser(t.deps);
    const created = await post(user, { body: 'Some **bold** words and <em>raw HTML</em>.' });
    const stored = await t.deps.database.db.selectFrom('posts').select('excerpt').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(stored.excerpt, 'Some bold words and <em>raw HTML</em>.');
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    const excerptOf = async () => ((await json(await get(t.baseUrl, '/api/open/v1/me/posts', { token }))).items as Array<{ excerpt: string }>)[0]!.excerpt;
    assert.equal(await excerptOf(), 'Some bold words and <em>raw HTML</em>.');
    // Change the column behind the service's back: the answer follows the column, not the body.
    await t.deps.database.db.updateTable('posts').set({ excerpt: 'Stored at write time.' }).where('id', '=', created.id).execute();
    assert.equal(await excerptOf(), 'Stored at write time.');
  });

  test('GET / answers seed table 2.5: the token\'s scopes, every endpoint with its full path and scope, the docs URL', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    const info = await json(await get(t.baseUrl, '/api/open/v1/', { token }));
    assert.deepEqual(info, {
      name: 'Community Open API',
      version: 'v1',
      scopes: ['openid', 'profile:read'],
      endpoints: [
        { method: 'GET', path: '/api/open/v1/', scope: '' },
        { method: 'GET', path: '/api/open/v1/me', scope: 'profile:read' },
        { method: 'GET', path: '/api/open/v1/me/posts', scope: 'posts:read' },
      ],
      docs: `${t.baseUrl}/docs`,
    });
  });

  test('GET /api/open/v1 without the trailing slash answers the same service info', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    const info = await json(await get(t.baseUrl, '/api/open/v1', { token }));
    assert.deepEqual(info.scopes, ['posts:read']);
  });

  test('each answer has exactly the fields, types and formats of the OpenAPI document', async () => {
    const user = await newUser(t.deps, { bio: 'x' });
    await post(user, { body: 'b'.repeat(300) });
    const { token } = await newPersonalToken(t.deps, user, ['profile:read', 'posts:read']);
    for (const path of ['/', '/me', '/me/posts']) {
      const body = await json(await get(t.baseUrl, `/api/open/v1${path}`, { token }));
      checkAgainstSchema(openapi, successSchema(openapi, path), body);
    }
  });

  test('the OpenAPI document speaks to outsiders: no description cites the specification by its sections', () => {
    assert.doesNotMatch(JSON.stringify(openapi), /\bseed\b/i);
  });

  test('the OpenAPI document is 3.1 with the bearer schemes, scopes, errors and rate-limit headers', async () => {
    assert.equal(openapi.openapi, '3.1.0');
    const components = openapi.components as { securitySchemes: Record<string, { type: string; flows?: { authorizationCode: { scopes: Record<string, string> } } }> };
    assert.equal(components.securitySchemes.personalToken?.type, 'http');
    assert.deepEqual(Object.keys(components.securitySchemes.oauth2!.flows!.authorizationCode.scopes), ['profile:read', 'posts:read']);
    const posts = (openapi.paths as Record<string, { get: { security: unknown; responses: Record<string, { headers?: Record<string, unknown> }> } }>)['/me/posts']!.get;
    assert.deepEqual(posts.security, [{ oauth2: ['posts:read'] }, { personalToken: ['posts:read'] }]);
    assert.deepEqual(Object.keys(posts.responses).sort(), ['200', '400', '401', '403', '429']);
    assert.ok(posts.responses['200']!.headers!['X-RateLimit-Remaining']);
    assert.ok(posts.responses['429']!.headers!['Retry-After']);
    assert.deepEqual((openapi.servers as Array<{ url: string }>)[0]!.url, `${t.baseUrl}/api/open/v1`);
  });

  test('answers carry Cache-Control: no-store and Vary: Authorization, errors too', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (const response of [await get(t.baseUrl, '/api/open/v1/me', { token }), await get(t.baseUrl, '/api/open/v1/me')]) {
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.match(response.headers.get('vary') ?? '', /authorization/i);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    }
  });

  test('browser apps on another origin may call the API: CORS preflight and exposed headers', async () => {
    const preflight = await fetch(`${t.baseUrl}/api/open/v1/me`, {
      method: 'OPTIONS',
      headers: { origin: 'https://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/i);
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const response = await get(t.baseUrl, '/api/open/v1/me', { token });
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.match(response.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
  });

  test('a 405 a browser app can meet without a preflight lets its script read Allow (RFC 9110 15.5.6): a form POST to /me, a GET of the MCP endpoint', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const origin = { origin: 'https://spa.example' };
    const asked: [string, string, RequestInit][] = [
      ['GET, HEAD', '/api/open/v1/me', { method: 'POST', headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b' }],
      ['POST', MCP_PATH, { headers: origin }],
      // The SDK's GET with its token, which a browser preflights for the header alone: GET is a
      // CORS-safelisted method, let through though the preflight allows POST only.
      ['POST', MCP_PATH, { headers: { ...origin, authorization: `Bearer ${token}` } }],
    ];
    const preflight = await fetch(`${t.baseUrl}${MCP_PATH}`, { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,mcp-protocol-version' } });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization.*Mcp-Protocol-Version/i);
    for (const [allow, path, init] of asked) {
      const response = await fetch(`${t.baseUrl}${path}`, init);
      assert.equal(response.status, 405, path);
      assert.equal(response.headers.get('allow'), allow, path);
      assert.equal(response.headers.get('access-control-allow-origin'), '*', path);
      const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(/, */).map((h) => h.toLowerCase());
      assert.ok(exposed.includes('allow'), `${init.method ?? 'GET'} ${path}: Allow is exposed (${exposed.join(', ')})`);
    }
  });

  test('an unknown path under /api/open/v1/ is 404 not_found as JSON', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (const path of ['/api/open/v1/nope', '/api/open/v1/me/drafts']) {
      const response = await get(t.baseUrl, path, { token });
      assert.equal(response.status, 404);
      assert.deepEqual(Object.keys(await response.json() as object).sort(), ['error', 'error_description']);
    }
    const body = await (await get(t.baseUrl, '/api/open/v1/nope')).json() as { error: string };
    assert.equal(body.error, 'not_found');
  });

  test('an unknown path under /api/open/v1/ answers a valid token with its rate-limit fields and counts it', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const first = await get(t.baseUrl, '/api/open/v1/nope', { token });
    assert.equal(first.status, 404);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    assert.ok(first.headers.get('x-ratelimit-limit') && first.headers.get('x-ratelimit-reset'), 'the limit and its reset');
    const second = await get(t.baseUrl, '/api/open/v1/me/drafts', { token });
    assert.equal(second.status, 404);
    assert.equal(Number(second.headers.get('x-ratelimit-remaining')), remaining - 1, 'the second answer counted the first');
    const refused = await get(t.baseUrl, '/api/open/v1/nope', { token: 'pat_not-a-real-token' });
    assert.equal(refused.status, 401, 'a token sent is checked');
    assert.equal((await refused.json() as { error: string }).error, 'invalid_token');
  });

  test('the OpenAPI document is public, and a token sent for it in the header is checked and counted as at every API address: a valid one gets the document with its rate-limit fields (429 past the limit), a refused one the 401 with its challenge', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const address = '/api/open/v1/openapi.json';
    const anonymous = await get(t.baseUrl, address);
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.headers.get('x-ratelimit-limit'), null, 'without the header: not counted');
    assert.equal(anonymous.headers.get('cache-control'), 'public, max-age=300');
    assert.deepEqual(await anonymous.json(), openapi);
    for (let used = 1; used <= 60; used++) {
      const answer = await get(t.baseUrl, address, { token });
      assert.equal(answer.status, 200, `request ${used}`);
      assert.equal(answer.headers.get('x-ratelimit-remaining'), String(60 - used), `request ${used} is counted`);
      assert.ok(answer.headers.get('x-ratelimit-limit') && answer.headers.get('x-ratelimit-reset') && answer.headers.get('ratelimit'), `request ${used}: the rate-limit fields`);
      assert.equal(answer.headers.get('cache-control'), 'no-store', `request ${used}: an answer for this token alone`);
      if (used === 1) assert.deepEqual(await answer.json(), openapi);
    }
    const limited = await get(t.baseUrl, address, { token });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.equal((await limited.json() as { error: string }).error, 'rate_limited');
    assert.equal((await get(t.baseUrl, '/api/open/v1/me', { token })).status, 429, 'one count with the other addresses');
    const refused = await get(t.baseUrl, address, { token: generateToken('personal') });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), `Bearer realm="api", error="invalid_token", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1", DPoP realm="api", algs="ES256 EdDSA Ed25519 PS256 RS256", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/open/v1"`);
    assert.equal((await refused.json() as { error: string }).error, 'invalid_token');
    assert.equal((await get(t.baseUrl, address)).status, 200, 'still public without the header');
  });

  test('a method an API address does not take, or any method on an unknown path, answers a valid token with its rate-limit fields; without a token the answer is unchanged', async () => {
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const cases: [string, string, number, Record<string, string>, string?][] = [
      ['POST', '/api/open/v1/me', 405, { 'content-type': 'application/json' }, '{"not json'],
      ['DELETE', '/api/open/v1/me/posts', 405, {}],
      ['PUT', '/api/open/v1/', 405, { 'content-type': 'application/xml' }, '<x/>'],
      ['PATCH', '/api/open/v1', 405, {}],
      ['POST', '/api/open/v1/nope', 404, { 'content-type': 'text/plain' }, 'x'],
      ['DELETE', '/api/open/v1/nope', 404, {}],
      // Methods of no route anywhere (WebDAV's), which the router takes all the same (`buildApp`).
      ['PROPFIND', '/api/open/v1/me', 405, {}],
      ['MKCOL', '/api/open/v1/nope', 404, {}],
      ['SEARCH', '/api/open/v1', 405, {}],
      // A body the router's parsers refuse (a QUERY without Content-Type) changes none of that (attack96).
      ['QUERY', '/api/open/v1/nope', 404, {}],
      ['QUERY', '/api/open/v1/me', 405, {}],
    ];
    for (const [method, path, status, headers, body] of cases) {
      const answer = await send(method, path, { ...headers, authorization: `Bearer ${token}` }, body);
      assert.equal(answer.status, status, `${method} ${path}: the body is not read`);
      assert.ok(answer.headers.get('x-ratelimit-limit') && answer.headers.get('x-ratelimit-remaining'), `${method} ${path}: the rate-limit fields`);
      const anonymous = await send(method, path, headers, body);
      assert.equal(anonymous.status, status, `${method} ${path} without a token`);
      assert.equal(anonymous.headers.get('x-ratelimit-limit'), null);
      if (status === 405) assert.equal(answer.headers.get('allow'), anonymous.headers.get('allow'));
      const refused = await send(method, path, { ...headers, authorization: 'Bearer pat_not-a-real-token' }, body);
      assert.equal(refused.status, 401, `${method} ${path}: a token sent is checked`);
    }
  });

  test('without the Authorization header, an address the API does not have is 404 and a method an address does not take is 405 with Allow, whatever the query or body holds: a form POST or access_token in the query is not the gate\'s 401', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const cases: [string, string, number, string | null, Record<string, string>, string?][] = [
      ['POST', '/api/open/v1/me', 405, 'GET, HEAD', form, 'a=b'],
      ['POST', '/api/open/v1/me', 405, 'GET, HEAD', { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' }, 'access_token=svcp_x'],
      ['POST', '/api/open/v1/', 405, 'GET, HEAD', form, 'x=1'],
      ['POST', '/api/open/v1/openapi.json', 405, 'GET, HEAD', form, 'x=1'],
      ['POST', '/api/open/v1/nope', 404, null, form, 'a=b'],
      ['GET', '/api/open/v1/nope?access_token=svcp_x', 404, null, {}],
      ['HEAD', '/api/open/v1/me/drafts?a=1&access_token=svcp_x', 404, null, {}],
      ['DELETE', '/api/open/v1/me/posts?access_token=svcp_x', 405, 'GET, HEAD', {}],
      ['PUT', '/api/open/v1?access_token=svcp_x', 405, 'GET, HEAD', form, 'a=b'],
    ];
    for (const [method, path, status, allow, headers, body] of cases) {
      const asked = `${method} ${path} ${body ?? ''}`;
      const answer = await fetch(`${t.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      assert.equal(answer.status, status, asked);
      assert.equal(answer.headers.get('allow'), allow, asked);
      assert.equal(answer.headers.get('www-authenticate'), null, `${asked}: no challenge`);
      assert.equal(answer.headers.get('access-control-allow-origin'), '*', `${asked}: the API's headers`);
      if (method === 'HEAD') continue;
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, asked);
      const error = await answer.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(error).sort(), ['error', 'error_description'], asked);
      assert.equal(error.error, status === 404 ? 'not_found' : 'invalid_request', asked);
    }
    // An address that takes the method still tells where the token goes (RFC 6750 3.1).
    const taken = await fetch(`${t.baseUrl}/api/open/v1/me?access_token=svcp_x`);
    assert.equal(taken.status, 401);
    assert.equal((await taken.json() as { error: string }).error, 'invalid_token');
  });

  test('an Authorization header with no value carries no credentials: it is answered as a request without the header, the 404 or 405 of an address or method there is none of, and the route\'s own word for a token in the query or a form; a second Authorization field is still refused', async () => {
    const form = ['Content-Type', 'application/x-www-form-urlencoded'];
    const cases: [string, string, number, string | null, string[], string?][] = [
      ['GET', '/api/open/v1/nope', 404, null, []],
      ['GET', '/api/open/v1/nope?access_token=svcp_x', 404, null, []],
      ['POST', '/api/open/v1/me', 405, 'GET, HEAD', form, 'access_token=svcp_x'],
      ['DELETE', MCP_PATH, 405, 'POST', []],
      ['PUT', '/api/oauth/userinfo', 405, 'GET, HEAD, POST', form, 'access_token=svco_x'],
    ];
    for (const value of ['', '   ']) {
      for (const [method, path, status, allow, fields, body] of cases) {
        const asked = `${method} ${path} with Authorization: "${value}"`;
        const answer = await rawRequest(method, `${t.baseUrl}${path}`, ['Authorization', value, ...fields], body);
        assert.equal(answer.status, status, asked);
        assert.equal(answer.headers.allow, allow ?? undefined, asked);
        assert.equal(answer.headers['www-authenticate'], undefined, `${asked}: no challenge`);
      }
      // Where the method is taken, the refusal says what is true: the token is not read from there.
      for (const [method, path, fields, body] of [['GET', '/api/open/v1/me?access_token=svcp_x', []], ['POST', '/api/oauth/userinfo', form, 'access_token=svco_x']] as const) {
        const answer = await rawRequest(method, `${t.baseUrl}${path}`, ['Authorization', value, ...fields], body);
        assert.equal(answer.status, 401, path);
        assert.match((JSON.parse(answer.body) as { error_description: string }).error_description, /^Tokens in the query string or a form body are not accepted/, path);
      }
    }
    // An empty field beside one with a token is two fields: refused, never read as the second alone.
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['profile:read']);
    for (const fields of [['Authorization', '', 'Authorization', `Bearer ${token}`], ['Authorization', `Bearer ${token}`, 'Authorization', '']]) {
      const answer = await rawRequest('GET', `${t.baseUrl}/api/open/v1/nope`, fields);
      assert.equal(answer.status, 400, fields.join(' '));
      assert.equal((JSON.parse(answer.body) as { error: string }).error, 'invalid_request');
    }
  });

  test('a method UserInfo does not take is 405 with Allow behind its gate, as at the API: a valid token is counted, a bad one refused, none is 405 whatever the query or body holds; GET and a form POST still work (OIDC Core 5.3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    const userinfo = `${t.baseUrl}/api/oauth/userinfo`;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [method, query, headers, body] of [['PUT', '', form, 'access_token=svco_x'], ['DELETE', '?access_token=svco_x', {}], ['PATCH', '', { 'content-type': 'application/json' }, '{"not json']] as const) {
      const init = { method, ...(body === undefined ? {} : { body }) };
      const asked = `${method} ${query} ${body ?? ''}`;
      const counted = await fetch(userinfo + query, { ...init, headers: { ...headers, authorization: `Bearer ${token}` } });
      // A valid token beside access_token in the query is two methods: 400 first (RFC 6750 2, 3.1).
      const twoMethods = query.includes('access_token');
      assert.equal(counted.status, twoMethods ? 400 : 405, asked);
      assert.equal(counted.headers.get('allow'), twoMethods ? null : 'GET, HEAD, POST', asked);
      assert.ok(counted.headers.get('x-ratelimit-remaining'), `${asked}: counted, with its rate-limit fields`);
      assert.deepEqual(Object.keys(await counted.json() as object).sort(), ['error', 'error_description'], asked);
      assert.equal((await fetch(userinfo + query, { ...init, headers: { ...headers, authorization: 'Bearer svco_not-a-real-token' } })).status, 401, `${asked}: a token sent is checked`);
      const anonymous = await fetch(userinfo + query, { ...init, headers });
      assert.equal(anonymous.status, 405, `${asked} without a token`);
      assert.equal(anonymous.headers.get('x-ratelimit-limit'), null, asked);
    }
    assert.equal((await get(t.baseUrl, '/api/oauth/userinfo', { token })).status, 200);
    const posted = await fetch(userinfo, { method: 'POST', headers: { ...form, authorization: `Bearer ${token}` }, body: 'a=b' });
    assert.equal(posted.status, 200);
    assert.equal((await posted.json() as { sub: string }).sub, String(user.id));
  });

  test('UserInfo refuses a form POST that carries access_token beside the Authorization header: 400 invalid_request, one method a request (RFC 6750 2, 3.1; OIDC Core 5.3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    const userinfo = `${t.baseUrl}/api/oauth/userinfo`;
    for (const [contentType, body] of [['application/x-www-form-urlencoded', `access_token=${token}`], ['Application/X-WWW-Form-Urlencoded; charset=utf-8', 'a=b&access_token=svco_x']] as const) {
      const answer = await fetch(userinfo, { method: 'POST', headers: { 'content-type': contentType, authorization: `Bearer ${token}` }, body });
      assert.equal(answer.status, 400, body);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer realm="api", error="invalid_request"/, body);
      assert.ok(answer.headers.get('x-ratelimit-remaining'), `${body}: the valid token is counted, with its rate-limit fields`);
      const error = await answer.json() as Record<string, string>;
      assert.deepEqual(Object.keys(error).sort(), ['error', 'error_description']);
      assert.equal(error.error, 'invalid_request');
      assert.match(error.error_description!, /Authorization header and access_token in the form body/);
    }
    // A form without access_token is served as before.
    const answer = await fetch(userinfo, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}` }, body: 'a=b' });
    assert.equal(answer.status, 200);
  });

  test('a form is known by its media type as the form parser reads it: blanks Node keeps around it (a no-break space) hide no access_token beside the header (RFC 6750 2, 3.1), nor a token sent in it alone', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    // Latin-1 on the socket: 0xA0 is a no-break space, which Node leaves in the field's value and
    // Fastify trims when it picks the form parser.
    const post = async (fields: string, body: string) => answersIn((await exchange(t.baseUrl, `POST /api/oauth/userinfo HTTP/1.1\r\nHost: x\r\n${fields}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)).text)[0]!;
    for (const type of ['application/x-www-form-urlencoded\u00a0', '\u00a0application/x-www-form-urlencoded', 'application/x-www-form-urlencoded\u00a0; charset=utf-8']) {
      const beside = await post(`Authorization: Bearer ${token}\r\nContent-Type: ${type}\r\n`, 'access_token=svco_x');
      assert.equal(beside.status, 400, `${JSON.stringify(type)} beside the header`);
      assert.match(beside.body, /Authorization header and access_token in the form body/, JSON.stringify(type));
      const alone = await post(`Content-Type: ${type}\r\n`, `access_token=${token}`);
      assert.equal(alone.status, 401, `${JSON.stringify(type)} alone`);
      assert.match(alone.body, /Tokens in the query string or a form body are not accepted/, JSON.stringify(type));
    }
  });

  test('UserInfo refuses a POST whose body is neither a form nor absent: 400 invalid_request with the challenge, its body unread (OIDC Core 5.3.1, RFC 6750 2.2 and 3.1); a POST with no body is served', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    const userinfo = `${t.baseUrl}/api/oauth/userinfo`;
    for (const [contentType, body] of [['application/json', '{"access_token":"svco_x"}'], ['application/json', '{"not json'], ['text/plain', 'a=b'], ['application/xml', '<a/>'], ['multipart/form-data; boundary=x', '--x--']] as const) {
      const asked = `${contentType} ${body}`;
      const answer = await rawRequest('POST', userinfo, ['Authorization', `Bearer ${token}`, 'Content-Type', contentType], body);
      assert.equal(answer.status, 400, asked);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api", error="invalid_request"/, asked);
      assert.equal(answer.headers['cache-control'], 'no-store', asked);
      assert.ok(answer.headers['x-ratelimit-remaining'], `${asked}: the valid token is counted, with its rate-limit fields`);
      const error = JSON.parse(answer.body) as Record<string, string>;
      assert.deepEqual(Object.keys(error).sort(), ['error', 'error_description'], asked);
      assert.equal(error.error, 'invalid_request', asked);
      assert.match(error.error_description!, /A POST to UserInfo carries no body or a form/, asked);
    }
    // Without a token, the gate's 401 comes first, whatever the body.
    assert.equal((await rawRequest('POST', userinfo, ['Content-Type', 'application/json'], '{}')).status, 401);
    // No Content-Type: no body, or one left unread, as node-oidc-provider reads it.
    for (const body of [undefined, 'a=b']) {
      const answer = await rawRequest('POST', userinfo, ['Authorization', `Bearer ${token}`], body);
      assert.equal(answer.status, 200, `no Content-Type, ${body ?? 'no body'}`);
      assert.equal((JSON.parse(answer.body) as { sub: string }).sub, String(user.id));
    }
  });

  test('UserInfo reads an empty Content-Type as none, as node-oidc-provider does: a POST with the token in the header and no body, or one left unread, is served (OIDC Core 5.3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    for (const body of ['', 'a=b']) {
      const answer = await rawRequest('POST', `${t.baseUrl}/api/oauth/userinfo`, ['Authorization', `Bearer ${token}`, 'Content-Type', ''], body);
      assert.equal(answer.status, 200, JSON.stringify(body));
      assert.equal((JSON.parse(answer.body) as { sub: string }).sub, String(user.id));
    }
  });

  test('UserInfo reads an empty Content-Type as none only when it is the one sent: one before a second (JSON, or a form carrying access_token beside the header) is refused 400 as a body of another type (RFC 9110 5.3, OIDC Core 5.3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    for (const [second, body] of [['application/json', '{"a":1}'], ['application/x-www-form-urlencoded', 'access_token=svco_x'], ['', 'a=b']] as const) {
      const asked = `then ${JSON.stringify(second)}`;
      const answer = await rawRequest('POST', `${t.baseUrl}/api/oauth/userinfo`, ['Authorization', `Bearer ${token}`, 'Content-Type', '', 'Content-Type', second], body);
      assert.equal(answer.status, 400, asked);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api", error="invalid_request"/, asked);
      assert.match((JSON.parse(answer.body) as { error_description: string }).error_description, /A POST to UserInfo carries no body or a form/, asked);
    }
  });

  test('UserInfo refuses a POST whose Content-Type names no media type (no type/subtype, a list) as it refuses any type but a form: 400 invalid_request with the challenge, not a 415 without one (OIDC Core 5.3.1, RFC 6750 3.1)', async () => {
    const user = await newUser(t.deps);
    const { token } = await newAccessToken(t.deps, user, 'openid profile:read');
    for (const contentType of ['form', 'application/x-www-form-urlencoded, application/json']) {
      const asked = JSON.stringify(contentType);
      const answer = await rawRequest('POST', `${t.baseUrl}/api/oauth/userinfo`, ['Authorization', `Bearer ${token}`, 'Content-Type', contentType], 'a=b');
      assert.equal(answer.status, 400, asked);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="api", error="invalid_request"/, asked);
      assert.match((JSON.parse(answer.body) as { error_description: string }).error_description, /A POST to UserInfo carries no body or a form/, asked);
    }
  });

  test('a preflight (OPTIONS) to UserInfo is answered 204 whatever body it carries: the refusal of a body other than a form is a POST\'s', async () => {
    for (const [contentType, body] of [['application/json', '{}'], ['application/xml', '<a/>']] as const) {
      const answer = await rawRequest('OPTIONS', `${t.baseUrl}/api/oauth/userinfo`, ['Origin', 'https://app.example', 'Access-Control-Request-Method', 'POST', 'Content-Type', contentType], body);
      assert.equal(answer.status, 204, contentType);
      assert.equal(answer.headers['access-control-allow-methods'], 'GET, POST', contentType);
    }
  });

  test('/docs is a page that documents every endpoint and scope', async () => {
    const response = await fetch(`${t.baseUrl}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const page = await response.text();
    for (const text of ['/api/open/v1/me/posts', '/api/open/v1/me', 'profile:read', 'posts:read', 'code_challenge', 'refresh_token',
      '/api/oauth/revoke', '/api/oauth/introspect', '/.well-known/openid-configuration', '/.well-known/jwks.json', '/api/oauth/userinfo',
      '/settings/developers', 'client create', 'Retry-After', 'insufficient_scope', 'nonce']) {
      assert.ok(page.includes(text), `the docs mention ${text}`);
    }
    // The one script adds Copy buttons (public/copy.js); nothing inline, and the page reads the same without it.
    assert.deepEqual(page.match(/<script[^>]*>/gi), ['<script src="/static/copy.js" defer>']);
  });

  test('/docs tells developers that only a successful request (2xx, not a refusal) counts as a token\'s use', async () => {
    const page = (await (await fetch(`${t.baseUrl}/docs`)).text()).replace(/\s+/g, ' ');
    assert.match(page, /Only a successful request counts as a use: one answered with a 2xx status that is not a refusal\./);
  });

  // Paging (INTERFACE section 7).

  async function authorWithPosts(count: number) {
    const user = await newUser(t.deps);
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      ids.push((await post(user, { title: `Post ${i}` })).id);
      if (i % 3 === 2) t.clock.advance(1000); // groups of three share a timestamp
    }
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    const list = async (query: string) => json(await get(t.baseUrl, `/api/open/v1/me/posts${query}`, { token }));
    return { user, ids, list };
  }

  test('paging defaults to page 0 of size 20', async () => {
    const { list } = await authorWithPosts(23);
    const page = await list('');
    assert.equal(page.page, 0);
    assert.equal(page.size, 20);
    assert.equal((page.items as unknown[]).length, 20);
    assert.equal(page.totalElements, 23);
    assert.equal(page.totalPages, 2);
  });

  test('a size above 50 is taken as 50, and the envelope says so', async () => {
    const { list } = await authorWithPosts(52);
    const page = await list('?size=500');
    assert.equal(page.size, 50);
    assert.equal((page.items as unknown[]).length, 50);
    assert.equal(page.totalPages, 2);
  });

  test('the last page holds the rest and a page past the end is empty', async () => {
    const { list } = await authorWithPosts(7);
    const last = await list('?page=1&size=5');
    assert.equal((last.items as unknown[]).length, 2);
    assert.deepEqual([last.page, last.size, last.totalElements, last.totalPages], [1, 5, 7, 2]);
    const past = await list('?page=9&size=5');
    assert.deepEqual(past.items, []);
    assert.deepEqual([past.page, past.size, past.totalElements, past.totalPages], [9, 5, 7, 2]);
    const far = await list('?page=999999999&size=50');
    assert.deepEqual([far.items, far.page, far.totalElements], [[], 999999999, 7]);
  });

  test('with no posts the totals are 0', async () => {
    const { list } = await authorWithPosts(0);
    assert.deepEqual(await list(''), { items: [], page: 0, size: 20, totalElements: 0, totalPages: 0 });
  });

  test('posts are newest first, ties by id (higher first), the same across pages', async () => {
    const { ids, list } = await authorWithPosts(7);
    const expected = ids.map((id, i) => ({ id, second: Math.floor(i / 3) }))
      .sort((a, b) => b.second - a.second || b.id - a.id).map((p) => p.id);
    const pages = [await list('?size=3'), await list('?size=3&page=1'), await list('?size=3&page=2')];
    assert.deepEqual(pages.flatMap((p) => (p.items as Array<{ id: number }>).map((i) => i.id)), expected);
  });

  test('malformed page or size is 400 invalid_request', async () => {
    const { ids } = await authorWithPosts(1);
    assert.equal(ids.length, 1);
    const user = await newUser(t.deps);
    const { token } = await newPersonalToken(t.deps, user, ['posts:read']);
    for (const query of ['page=-1', 'page=1.5', 'page=abc', 'page=', 'size=0', 'size=-5', 'size=2.5', 'size=', 'size=1e1', 'page=%201', 'page=1&page=2', 'size=99999999999']) {
      const response = await get(t.baseUrl, `/api/open/v1/me/posts?${query}`, { token });
      assert.equal(response.status, 400, query);
      const body = await response.json() as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_request', query);
      assert.equal(typeof body.error_description, 'string');
    }
  });
});
