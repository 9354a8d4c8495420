import { checkKeysSealedAlike, rotateSigningKeys } from '../../core/keys.js';
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
  usage: 'keys rotate [--now] [--retire-previous]',
  options: { now: { type: 'boolean' }, 'retire-previous': { type: 'boolean' } },
  async run(deps, values) {
    const secret = deps.settings.keysSecret;
    // The new keys are sealed as the stored ones are, or the servers could not sign with them.
    await checkKeysSealedAlike(deps.stores, secret);
    const { kids, activeAt } = await rotateSigningKeys(deps.stores, deps.clock, secret, {
      activationSeconds: deps.settings.signingKeyActivationSeconds,
      now: values.now === true,
      retirePrevious: values['retire-previous'] === true,
    });
    return { kid: kids.RS256, kids, active_at: new Date(activeAt).toISOString() };
  },
  human: (r) => `new signing keys: ${Object.entries(r.kids).map(([alg, kid]) => `${alg} ${kid}`).join(', ')}; they sign from ${r.active_at}`,
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
