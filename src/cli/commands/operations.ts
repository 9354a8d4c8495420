import { rotateSigningKeys } from '../../core/keys.js';
import { saveDemoCredentials, seedDemo } from '../../demo.js';
import { runJanitor } from '../../janitor.js';
import { defineCommand } from '../command.js';

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
    // The demo user's password is random: kept where `npm start` keeps it, for the operator.
    const created = await seedDemo(deps.stores, deps.clock, deps.settings.baseUrl);
    if (created) saveDemoCredentials(deps.settings, created);
    return { ok: true as const };
  },
  human: () => 'demo data is in place; its sign-in and client secret are in demo-credentials.json beside the database (./data without SQLite)',
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
    return { deleted: await runJanitor(deps) };
  },
  human: (r) => Object.entries(r.deleted).map(([table, n]) => `${table}: ${n} deleted`).join('\n'),
});
