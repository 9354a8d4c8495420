/** The console's rules on who may act, checked where the change is made, on both databases. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { NO_AUDIT } from '../../src/core/audit.js';
import type { User } from '../../src/core/accounts/ports.js';
import { SecurityLog } from '../../src/core/accounts/security-log.js';
import { OAuthError } from '../../src/core/errors.js';
import { changeMemberRole } from '../../src/core/staff/console.js';
import type { Stores } from '../../src/core/stores.js';
import { forEachDatabase } from '../support/databases.js';
import { storesForSuite } from '../support/stores.js';
import { TestClock } from '../support/clock.js';

forEachDatabase('staff rules', (database) => {
  let stores: Stores;
  storesForSuite(database, (s) => { stores = s; });
  const clock = new TestClock();

  async function admin(): Promise<User> {
    const user = await stores.users.create({ username: `a${randomBytes(4).toString('hex')}`, passwordHash: 'x', bio: '', member: false, level: 1, xp: 0 }, clock.now());
    assert.equal(await stores.roles.setRole(user.id, 'admin', clock.now()), true);
    return user;
  }
  const asActor = (user: User) => ({ id: user.id, username: user.username, role: 'admin' as const, via: 'site' as const, address: '192.0.2.1' });

  test('two admins demoting each other at once: one change is made, the other is refused, and an admin is left', async () => {
    const [ann, bob] = await Promise.all([admin(), admin()]);
    const deps = { stores, clock, audit: NO_AUDIT, securityLog: new SecurityLog(stores.securityEvents, clock, NO_AUDIT) };
    const outcomes = await Promise.allSettled([
      changeMemberRole(deps, asActor(ann), bob.id, 'member', 'demoting bob'),
      changeMemberRole(deps, asActor(bob), ann.id, 'member', 'demoting ann'),
    ]);
    const made = outcomes.filter((o) => o.status === 'fulfilled' && o.value.ok);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(made.length, 1, 'exactly one demotion is made');
    assert.equal(refused.length, 1);
    const reason = (refused[0] as PromiseRejectedResult).reason;
    assert.ok(reason instanceof OAuthError && reason.status === 403, String(reason));
    const roles = await Promise.all([stores.roles.roleOf(ann.id), stores.roles.roleOf(bob.id)]);
    assert.deepEqual(roles.sort(), ['admin', 'member']);
    const logged = await stores.staffLog.list({ limit: 10 });
    assert.equal(logged.filter((e) => e.action === 'member.role' && [String(ann.id), String(bob.id)].includes(e.targetId)).length, 1, 'only the change made is in the staff log');
  });
});
