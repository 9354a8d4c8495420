/**
 * attack103 F3: every JSON error has the RFC 6749 5.2 shape, `error` and `error_description`
 * (INTERFACE section 6). The passkey options the site's script asks for (`/login/passkey/options`,
 * `/login/second-step/passkey/options`, `/settings/security/passkeys/options`) answered their
 * refusals with `error` alone (`{"error":"sign_in_expired"}`, `sign_in_required`, `sign_in_again`,
 * `rate_limited`), the only JSON errors of the service without a description.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { Visitor, signedInMember } from '../site/visitor.js';
import { PASSKEY_OPTIONS_PER_MINUTE } from '../../src/http/routes/sign-in.js';
import { unique } from '../oauth/helpers.js';

async function refusalOf(visitor: Visitor, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await visitor.post(path, {});
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, path);
  return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> };
}

forEachDatabase('attack103 F3: the passkey options\' refusals keep the RFC shape', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('no waiting sign-in, no sign-in, too many asks: each refusal has error and error_description', async () => {
    const visitor = new Visitor(t.baseUrl);
    await visitor.get('/login');
    for (const [path, status, error] of [
      ['/login/second-step/passkey/options', 401, 'sign_in_expired'],
      ['/settings/security/passkeys/options', 401, 'sign_in_required'],
    ] as const) {
      const refusal = await refusalOf(visitor, path);
      assert.equal(refusal.status, status, path);
      assert.equal(refusal.body.error, error, path);
      assert.equal(typeof refusal.body.error_description, 'string', path);
    }
    // Sign-in challenges are not limited (nothing is stored); a registration's are, per member.
    const member = (await signedInMember(t, unique('member'), 'correct horse battery')).visitor;
    let last: { status: number; body: Record<string, unknown> } | undefined;
    for (let i = 0; i <= PASSKEY_OPTIONS_PER_MINUTE; i++) last = await refusalOf(member, '/settings/security/passkeys/options');
    assert.equal(last!.status, 429);
    assert.equal(last!.body.error, 'rate_limited');
    assert.equal(typeof last!.body.error_description, 'string');
  });
});
