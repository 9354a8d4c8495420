/** Staff for the console's tests: accounts with a role, signed in from a Visitor, with two-step verification or without. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/core/accounts/accounts.js';
import type { User } from '../../src/core/accounts/ports.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import type { Role } from '../../src/core/staff/ports.js';
import type { TestApp } from '../support/app.js';
import { Visitor } from '../site/visitor.js';

export const PASSWORD = 'a staff pass phrase';
const TOTP_STEP_MS = 30_000;

export const uniqueName = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

export interface Person {
  user: User;
  visitor: Visitor;
  /** The authenticator app's secret (base32), when two-step verification is on. */
  secret?: string;
}

/** A new account of `role`, signed in; with two-step verification turned on through the security page when `twoStep`. */
export async function person(t: TestApp, role: Role, options: { twoStep: boolean }): Promise<Person> {
  const user = await createAccount(t.deps.stores, t.clock, { username: uniqueName(role.slice(0, 3)), password: PASSWORD });
  if (role !== 'member') assert.equal(await t.deps.stores.roles.setRole(user.id, role, t.clock.now()), true);
  const visitor = new Visitor(t.baseUrl);
  await visitor.signIn(user.username, PASSWORD);
  if (!options.twoStep) return { user, visitor };
  const started = await visitor.post('/settings/security', { action: 'totp-start' });
  assert.equal(started.status, 200, 'two-step enrolment started');
  const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(started.text)![1]!.replace(/ /g, '');
  const confirmed = await visitor.post('/settings/security', { action: 'totp-confirm', code: totpCode(secret, t.clock.now()) });
  assert.equal(confirmed.status, 200, 'two-step verification on');
  // The enrolment spent this time step: the next code is the next step's.
  t.clock.advance(TOTP_STEP_MS);
  return { user, visitor, secret };
}

/**
 * The app's page as `who` loads it, what its "Mark verified" form carries of it (`reviewed`: the
 * name, homepage and addresses the page showed), and a function posting that form, as a browser
 * would, whenever the test likes, with `reason` confirmed.
 */
export async function appReview(who: Person, clientId: string): Promise<{ page: string; reviewed: string; verify: (reason: string) => ReturnType<Visitor['post']> }> {
  const page = (await who.visitor.get(`/admin/apps/${encodeURIComponent(clientId)}`)).text;
  const reviewed = /name="reviewed" value="([^"]*)"/.exec(page)?.[1];
  assert.ok(reviewed !== undefined, 'the page offers to mark the app verified');
  const unescaped = reviewed.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return { page, reviewed: unescaped, verify: (reason) => who.visitor.post(`/admin/apps/${encodeURIComponent(clientId)}/verified`, { verified: 'yes', reviewed: unescaped, reason, confirm: 'yes' }) };
}

/** Signs `who` in again (password, then a code of the app), as the console asks after 15 minutes. */
export async function signInAgain(t: TestApp, who: Person): Promise<void> {
  const first = await who.visitor.post('/login', { username: who.user.username, password: PASSWORD, return_to: '/' });
  assert.equal(first.status, 303);
  assert.equal(first.location, '/login/second-step');
  const second = await who.visitor.post('/login/second-step', { code: totpCode(who.secret!, t.clock.now()) });
  assert.equal(second.status, 303, 'second step passed');
  t.clock.advance(TOTP_STEP_MS);
}

/** Every route the app registers under /admin, with its methods, read from Fastify's own route tree; not TRACE, which fetch refuses to send. */
export function consoleRoutes(t: TestApp): Array<{ path: string; methods: string[] }> {
  const routes: Array<{ path: string; methods: string[] }> = [];
  const stack: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^(.*?)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...m[1]!].length / 4;
    stack.length = depth;
    stack[depth] = m[2]!;
    const path = stack.join('');
    if (m[3] && (path === '/admin' || path.startsWith('/admin/'))) routes.push({ path, methods: m[3].split(', ').filter((x) => x !== 'OPTIONS' && x !== 'TRACE') });
  }
  return routes;
}
