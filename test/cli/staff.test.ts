/**
 * The staff console's commands (INTERFACE section 14): `user set-role` and `staff-log`, and the
 * operator's other changes the staff log keeps, run as a process against each database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, test } from 'node:test';
import { type CliResult, svc } from '../support/cli.js';
import { forEachDatabase } from '../support/databases.js';

const name = (prefix: string) => `${prefix}${randomBytes(3).toString('hex')}`;

forEachDatabase('staff commands', (database) => {
  const run = (...args: string[]) => svc(database.url, args);
  before(() => assert.equal(run('migrate', '--json').code, 0));

  test('user set-role prints {"id","role"}; the change is in staff-log and an audit line', () => {
    const username = name('mod');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const r = run('user', 'set-role', '--username', username, '--role', 'moderator', '--reason', 'runs the forum', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json, { id: user.id, role: 'moderator' });
    const audit = r.stderr.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(audit.map((a) => [a.audit, a.action, a.targetId, a.via, a.actorId]), [['staff.action', 'member.role', String(user.id), 'cli', null]]);
    const log = run('staff-log', '--json');
    assert.equal(log.code, 0, log.stderr);
    const [latest] = log.json.entries;
    assert.deepEqual(
      { actor: latest.actor, action: latest.action, target_kind: latest.target_kind, target_id: latest.target_id, target: latest.target, detail: latest.detail, reason: latest.reason },
      { actor: 'cli', action: 'member.role', target_kind: 'member', target_id: String(user.id), target: username, detail: { role: 'moderator' }, reason: 'runs the forum' },
    );
    assert.match(latest.at, /Z$/);
  });

  test('user set-role refuses an unknown role, an unknown user or a reason out of 3 to 500 characters, and logs nothing', () => {
    const username = name('rol');
    run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const before = run('staff-log', '--json').json.entries.length;
    for (const [args, message] of [
      [['--username', username, '--role', 'owner'], /unknown role "owner"/],
      [['--username', name('ghost'), '--role', 'admin'], /unknown user/],
      [['--username', username, '--role', 'admin', '--reason', 'no'], /reason/],
    ] as const) {
      const r = run('user', 'set-role', ...args, '--json');
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    }
    assert.equal(run('staff-log', '--json').json.entries.length, before);
  });

  test('the operator\'s status changes, app deactivations and key rotations are in the staff log with their reason, as the console\'s are', () => {
    const username = name('sus');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const { json: client } = run('client', 'create', '--name', 'Spam App', '--type', 'public', '--redirect-uri', 'https://spam.example/cb', '--json');
    assert.equal(run('user', 'set-status', '--username', username, '--status', 'suspended', '--reason', 'spam wave', '--json').code, 0);
    assert.equal(run('client', 'deactivate', '--client-id', client.client_id, '--reason', 'phishing page', '--json').code, 0);
    const rotated = run('keys', 'rotate', '--retire-previous', '--reason', 'key leaked', '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    const entries = run('staff-log', '--limit', '3', '--json').json.entries.reverse();
    const seen = entries.map((e: Record<string, unknown>) => ({ actor: e.actor, action: e.action, target_id: e.target_id, target: e.target, reason: e.reason, detail: e.detail }));
    assert.deepEqual(seen, [
      { actor: 'cli', action: 'member.status', target_id: String(user.id), target: username, reason: 'spam wave', detail: { from: 'active', status: 'suspended' } },
      { actor: 'cli', action: 'app.status', target_id: client.client_id, target: 'Spam App', reason: 'phishing page', detail: { from: 'active', status: 'deactivated' } },
      { actor: 'cli', action: 'keys.rotated', target_id: '', target: '', reason: 'key leaked', detail: { ...rotated.json.kids, active_at: rotated.json.active_at, previous_withdrawn: 'yes' } },
    ]);
    // A reason out of bounds is refused before anything changes.
    const refused = run('user', 'set-status', '--username', username, '--status', 'active', '--reason', 'no', '--json');
    assert.equal(refused.code, 2);
    assert.equal(run('staff-log', '--limit', '1', '--json').json.entries[0].action, 'keys.rotated');
  });

  /**
   * A command that made a secret wrote its staff-log entry (`expected`, the latest) and its audit
   * lines (`staff.action`, then `audit`), and neither holds the secret it printed.
   */
  function assertStaffLogged(result: CliResult, audit: string, secret: string, expected: Record<string, unknown>): void {
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stderr.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.map((a) => [a.audit, a.action ?? null, a.via]), [['staff.action', expected.action, 'cli'], [audit, null, 'cli']]);
    const [latest] = run('staff-log', '--limit', '1', '--json').json.entries;
    assert.deepEqual(Object.fromEntries(Object.keys(expected).map((key) => [key, latest[key]])), expected);
    assert.ok(!JSON.stringify(latest).includes(secret) && !result.stderr.includes(secret), 'no secret in the staff log or the audit lines');
  }

  test('the operator\'s secret rotation of an app is in the staff log with its reason, as app.secret_rotated, without the secret', () => {
    const { json: client } = run('client', 'create', '--name', 'Leaky App', '--type', 'confidential', '--redirect-uri', 'https://leaky.example/cb', '--json');
    const rotated = run('client', 'rotate-secret', '--client-id', client.client_id, '--reason', 'secret posted in a public repository', '--json');
    assertStaffLogged(rotated, 'client.secret_rotated', rotated.json.client_secret,
      { actor: 'cli', action: 'app.secret_rotated', target_kind: 'app', target_id: client.client_id, target: 'Leaky App', detail: {}, reason: 'secret posted in a public repository' });
  });

  test('the operator\'s personal token for a member is in the staff log with its reason, name, scopes and expiry, as member.token_created, without the token', () => {
    const username = name('tok');
    const { json: user } = run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    const made = run('token', 'create', '--username', username, '--name', 'support export', '--scopes', 'posts:read', '--expires-in-days', 'none', '--reason', 'the member asked for an export', '--json');
    assertStaffLogged(made, 'personal_token.created', made.json.token, { actor: 'cli', action: 'member.token_created', target_kind: 'member',
      target_id: String(user.id), target: username, detail: { name: 'support export', scope: 'posts:read', expires: 'never' }, reason: 'the member asked for an export' });
  });

  test('staff-log pages newest first and says where the next page starts', () => {
    const username = name('pag');
    run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    for (const role of ['moderator', 'admin', 'member']) run('user', 'set-role', '--username', username, '--role', role, '--json');
    const page = run('staff-log', '--limit', '2', '--json').json;
    assert.deepEqual(page.entries.map((e: { detail: { role: string } }) => e.detail.role), ['member', 'admin']);
    assert.equal(page.next_before, page.entries[1].id);
    const next = run('staff-log', '--limit', '1', '--before', String(page.next_before), '--json').json;
    assert.deepEqual(next.entries.map((e: { detail: { role: string } }) => e.detail.role), ['moderator']);
  });

  test('staff-log prints one line per entry, a reason of several lines included', () => {
    const username = name('lin');
    run('user', 'create', '--username', username, '--password', 'long enough pw', '--json');
    run('user', 'set-role', '--username', username, '--role', 'moderator', '--reason', 'first line\n2026-01-01T00:00:00Z  cli  keys.rotated', '--json');
    const printed = run('staff-log', '--limit', '1');
    assert.equal(printed.code, 0);
    assert.equal(printed.stdout.trimEnd().split('\n').length, 2, printed.stdout);
    assert.match(printed.stdout, /"first line\\n2026-01-01T00:00:00Z {2}cli {2}keys\.rotated"/);
  });
});
