/** The command line (INTERFACE section 9), run as a process against each database. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { tokenKind } from '../../src/core/credentials.js';
import { svc } from '../support/cli.js';
import { forEachDatabase } from '../support/databases.js';

const name = (prefix: string) => `${prefix}${randomBytes(3).toString('hex')}`;

forEachDatabase('command line', (database) => {
  const run = (...args: string[]) => svc(database.url, args);

  /** Exit code 2, one line on stderr, nothing on stdout. */
  const assertBadArguments = (result: ReturnType<typeof run>, message: RegExp) => {
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
  };

  test('migrate prints {"ok":true}', () => {
    const r = run('migrate', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { ok: true });
  });

  test('user create prints the id as a number and the username', () => {
    const username = name('ann');
    const r = run('user', 'create', '--username', username, '--password', 'long enough pw', '--bio', 'Hi', '--member', '--level', '3', '--xp', '40', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['id', 'username']);
    assert.equal(typeof r.json.id, 'number');
    assert.equal(r.json.username, username);
  });

  test('a duplicate username, in any letter case, is a bad argument', () => {
    const username = name('dup');
    assert.equal(run('user', 'create', '--username', username, '--password', 'long enough pw').code, 0);
    assertBadArguments(run('user', 'create', '--username', username.toUpperCase(), '--password', 'long enough pw', '--json'), /taken/);
  });

  test('user set-status changes the status; an unknown status or user is a bad argument', () => {
    const username = name('sue');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const r = run('user', 'set-status', '--username', username, '--status', 'suspended', '--json');
    assert.deepEqual(r.json, { id: user.id, status: 'suspended' });
    assertBadArguments(run('user', 'set-status', '--username', username, '--status', 'frozen', '--json'), /unknown status "frozen"/);
    assertBadArguments(run('user', 'set-status', '--username', name('ghost'), '--status', 'active', '--json'), /unknown user/);
  });

  test('client create prints id, secret once for a confidential client, type and redirect URIs', () => {
    const owner = name('own');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const r = run('client', 'create', '--name', 'App', '--type', 'confidential', '--redirect-uri', 'https://app.example/cb',
      '--redirect-uri', 'http://127.0.0.1/cb', '--owner', owner, '--homepage', 'https://app.example', '--id-token-alg', 'ES256', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['client_id', 'client_secret', 'type', 'redirect_uris']);
    assert.equal(tokenKind(r.json.client_secret), 'clientSecret');
    assert.deepEqual(r.json.redirect_uris, ['https://app.example/cb', 'http://127.0.0.1/cb']);
    const pub = run('client', 'create', '--name', 'Mobile', '--type', 'public', '--redirect-uri', 'http://127.0.0.1/cb', '--json');
    assert.deepEqual(Object.keys(pub.json), ['client_id', 'type', 'redirect_uris']);
  });

  test('client create takes post-logout redirect URIs and a back-channel logout URI, and prints them', () => {
    const r = run('client', 'create', '--name', 'Logout', '--type', 'confidential', '--redirect-uri', 'https://app.example/cb',
      '--post-logout-redirect-uri', 'https://app.example/bye', '--post-logout-redirect-uri', 'http://127.0.0.1/bye',
      '--backchannel-logout-uri', 'https://app.example/backchannel', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(r.json), ['client_id', 'client_secret', 'type', 'redirect_uris', 'post_logout_redirect_uris', 'backchannel_logout_uri']);
    assert.deepEqual(r.json.post_logout_redirect_uris, ['https://app.example/bye', 'http://127.0.0.1/bye']);
    assert.equal(r.json.backchannel_logout_uri, 'https://app.example/backchannel');
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb',
      '--post-logout-redirect-uri', 'http://evil.example/bye', '--json'), /post-logout redirect URI/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb',
      '--backchannel-logout-uri', 'https://a.example/bc#x', '--json'), /back-channel logout URI .* fragment/);
  });

  test('a malformed redirect URI, unknown type or unknown owner is a bad argument', () => {
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'http://evil.example/cb', '--json'), /redirect URI/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb#frag', '--json'), /fragment/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'secret', '--redirect-uri', 'https://a.example/cb', '--json'), /unknown type/);
    assertBadArguments(run('client', 'create', '--name', 'A', '--type', 'public', '--redirect-uri', 'https://a.example/cb', '--owner', name('nobody'), '--json'), /unknown user/);
  });

  test('client rotate-secret prints a new secret; deactivate prints the status', () => {
    const { json: client } = run('client', 'create', '--name', 'A', '--type', 'confidential', '--redirect-uri', 'https://a.example/cb', '--json');
    const r = run('client', 'rotate-secret', '--client-id', client.client_id, '--json');
    assert.equal(r.json.client_id, client.client_id);
    assert.notEqual(r.json.client_secret, client.client_secret);
    assert.deepEqual(run('client', 'deactivate', '--client-id', client.client_id, '--json').json, { client_id: client.client_id, status: 'deactivated' });
    assertBadArguments(run('client', 'rotate-secret', '--client-id', 'nope', '--json'), /unknown client/);
  });

  test('post create prints the id and the absolute post URL; drafts too', () => {
    const author = name('pat');
    run('user', 'create', '--username', author, '--password', 'long enough pw');
    const r = run('post', 'create', '--username', author, '--title', 'Hello', '--category', 'News', '--body', 'Body', '--likes', '3', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { id: r.json.id, url: `http://localhost:3000/posts/${r.json.id}` });
    assert.equal(run('post', 'create', '--username', author, '--title', 'D', '--category', 'News', '--body', 'B', '--draft', '--json').code, 0);
    assertBadArguments(run('post', 'create', '--username', author, '--title', 'T', '--category', 'C', '--body', 'B', '--likes', 'many', '--json'), /--likes/);
  });

  test('token create prints a personal token and its expiry in UTC with Z, or null', () => {
    const owner = name('tok');
    run('user', 'create', '--username', owner, '--password', 'long enough pw');
    const r = run('token', 'create', '--username', owner, '--name', 'ci', '--scopes', 'profile:read posts:read', '--expires-in-days', '30', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(tokenKind(r.json.token), 'personal');
    assert.match(r.json.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(run('token', 'create', '--username', owner, '--name', 'x', '--scopes', 'profile:read', '--expires-in-days', 'none', '--json').json.expires_at, null);
    assertBadArguments(run('token', 'create', '--username', owner, '--name', 'x', '--scopes', 'openid', '--json'), /scope/);
  });

  test('keys rotate prints the new kid; janitor prints deleted counts; demo seeds once', () => {
    assert.match(run('keys', 'rotate', '--json').json.kid, /^[A-Za-z0-9_-]{43}$/);
    const janitor = run('janitor', '--json');
    assert.equal(typeof janitor.json.deleted.access_tokens, 'number');
    assert.deepEqual(run('demo', '--json').json, { ok: true });
    assert.deepEqual(run('demo', '--json').json, { ok: true });
  });

  test('an unknown command or option, or a missing option, is a bad argument', () => {
    assertBadArguments(run('user', 'explode', '--json'), /unknown command/);
    assertBadArguments(run('user', 'create', '--username', 'x', '--colour', 'red', '--json'), /colour/);
    assertBadArguments(run('user', 'create', '--username', name('x'), '--json'), /--password is required/);
  });

  test('bad arguments change nothing', () => {
    const username = name('none');
    assertBadArguments(run('user', 'create', '--username', username, '--password', 'short', '--json'), /password/);
    assertBadArguments(run('post', 'create', '--username', username, '--title', 'T', '--category', 'C', '--body', 'B', '--json'), /unknown user/);
  });
});

test('a bad setting makes the command line stop with one line naming it', () => {
  const r = svc('mysql://nope', ['migrate', '--json']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /DATABASE_URL/);
  assert.equal(r.stdout, '');
});
