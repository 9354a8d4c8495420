/** A test app's mail as a member meets it: what is queued, sent; an address verified by its link. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Visitor } from '../site/visitor.js';
import type { TestApp, TestAppWithSmtp } from './app.js';

/** Sends what is queued, once the work requests left running (a reset link's mail) is done. */
export async function deliverMail(t: TestApp): Promise<{ claimed: number }> {
  await t.deps.background.settled();
  return t.deps.mailDeliveries.runOnce();
}

/** Gives the member signed in as `visitor` a verified address as a member does: the e-mail page, then the mailed link. */
export async function verifiedAddress(t: TestAppWithSmtp, visitor: Visitor, email = `m${randomBytes(5).toString('hex')}@example.test`): Promise<string> {
  assert.equal((await visitor.post('/settings/email', { email })).status, 200);
  await deliverMail(t);
  const link = /http:\/\/\S+\/email\/verify\?token=[A-Za-z0-9_-]+/.exec(t.smtp.to(email).at(-1)?.text ?? '')?.[0];
  assert.ok(link, 'a verification link was mailed');
  assert.equal((await visitor.get(link.slice(t.baseUrl.length))).status, 200);
  await deliverMail(t);
  return email;
}

/** Asks for a reset link for `login` from `visitor` and reads the newest one mailed to `email` (notices may follow it). */
export async function mailedResetToken(t: TestAppWithSmtp, visitor: Visitor, login: string, email: string): Promise<string> {
  assert.equal((await visitor.post('/password/forgot', { login })).status, 200);
  await deliverMail(t);
  const token = t.smtp.to(email).map((mail) => /\/password\/reset\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1]).filter((found) => found !== undefined).at(-1);
  assert.ok(token, 'a reset link was mailed');
  return token;
}
