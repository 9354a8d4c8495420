import { rotateSigningKeys } from '../../core/keys.js';
import { seedDemo } from '../../demo.js';
import { defineCommand } from '../command.js';

/** How long a revoked or expired row is kept for audit before the janitor deletes it. */
export const AUDIT_WINDOW_MS = 7 * 86_400_000;
export const JANITOR_BATCH_SIZE = 500;

export const migrate = defineCommand({
  name: 'migrate',
  usage: 'migrate',
  options: {},
  // The command line migrates before every command; this one does only that.
  run: async () => ({ ok: true as const }),
  human: () => 'database is up to date',
});

export const demo = defineCommand({
  name: 'demo',
  usage: 'demo',
  options: {},
  async run(deps) {
    await seedDemo(deps.stores, deps.clock, deps.settings.baseUrl);
    return { ok: true as const };
  },
  human: () => 'demo data is in place',
});

export const keysRotate = defineCommand({
  name: 'keys rotate',
  usage: 'keys rotate',
  options: {},
  async run(deps) {
    const kids = await rotateSigningKeys(deps.stores, deps.clock, deps.settings.keysSecret);
    return { kid: kids.RS256, kids };
  },
  human: (r) => `new current signing keys: ${Object.entries(r.kids).map(([alg, kid]) => `${alg} ${kid}`).join(', ')}`,
});

export const janitor = defineCommand({
  name: 'janitor',
  usage: 'janitor',
  options: {},
  async run(deps) {
    const deleted = await deps.stores.housekeeping.purge(deps.clock.now(), {
      auditWindowMs: AUDIT_WINDOW_MS,
      batchSize: JANITOR_BATCH_SIZE,
      grantLifetimeMs: deps.settings.refreshTokenTtlSeconds * 1000,
    });
    return { deleted };
  },
  human: (r) => Object.entries(r.deleted).map(([table, n]) => `${table}: ${n} deleted`).join('\n'),
});
