import { rotateKeysAsStaff } from '../../core/staff/console.js';
import { demoCredentialsPath, saveDemoCredentials, seedDemo } from '../../demo.js';
import { runJanitor } from '../../janitor.js';
import { defineCommand } from '../command.js';
import { withNotices } from '../owner-notices.js';
import { REASON_OPTION } from './staff.js';

export const migrate = defineCommand({
  name: 'migrate',
  summary: 'bring the database schema up to date',
  description: 'Brings the database schema up to date (every command does it first; this one does only that).',
  usage: '',
  options: {},
  help: {},
  prints: '{"ok":true}',
  run: async () => ({ ok: true as const }),
  human: () => 'database is up to date',
});

export const demo = defineCommand({
  name: 'demo',
  summary: 'seed the demo data',
  description: 'Seeds the demo (user, posts, two clients) unless a user named demo is there; its sign-in and client secret are kept in a file readable by you only, named in the answer.',
  usage: '',
  options: {},
  help: {},
  prints: '{"ok":true,"seeded","credentials_file"}: whether this run seeded it, and where its sign-in and secret are kept',
  async run(deps) {
    // The demo user's password is random: kept where `npm start` keeps it, for the operator.
    const seeded = await seedDemo(deps.stores, deps.clock, {
      baseUrl: deps.settings.baseUrl, when: 'no demo user', keep: (credentials) => saveDemoCredentials(deps.settings, credentials),
    });
    return { ok: true as const, seeded: seeded !== undefined, credentials_file: demoCredentialsPath(deps.settings) };
  },
  human: (r) => r.seeded
    ? `demo seeded; its sign-in and client secret are in ${r.credentials_file}`
    : `a user named demo is already there: nothing seeded (its sign-in and client secret were kept in ${r.credentials_file} when it was)`,
});

export const keysRotate = defineCommand({
  name: 'keys rotate',
  summary: 'add new id_token signing keys',
  description: 'Adds new signing keys: every instance publishes them within 5 s; they sign SIGNING_KEY_ACTIVATION_SECONDS later. Run it with the servers\' KEYS_SECRET. Written to the staff log.',
  usage: `[--now] [--retire-previous] ${REASON_OPTION.usage}`,
  options: { now: { type: 'boolean' }, 'retire-previous': { type: 'boolean' }, ...REASON_OPTION.options },
  help: {
    ...REASON_OPTION.help,
    now: 'sign with the new keys at once (the old ones stay published)',
    'retire-previous': 'after a key compromise: sign with the new keys at once and withdraw every old key from the JWKS (id_tokens they signed stop verifying)',
  },
  prints: '{"kid","kids","active_at"}: the new RS256 kid, every algorithm\'s new kid, when they sign (ISO-8601 UTC)',
  async run(deps, values) {
    const immediate = values.now === true;
    const previousWithdrawn = values['retire-previous'] === true;
    // The new keys are sealed as the stored ones are (checked first), or the servers could not sign
    // with them; checked and stored in the start turn, so a server starting meanwhile on a new
    // database with another KEYS_SECRET cannot make its keys between the two (attack135).
    const rotate = () => rotateKeysAsStaff(withNotices(deps), { via: 'cli' }, { now: immediate, retirePrevious: previousWithdrawn }, REASON_OPTION.read(values));
    // Loaded already by the command line before any command runs (src/cli/main.ts): `--help` loads no database driver.
    const { inStartTurn } = await import('../../base-deps.js');
    const { kids, activeAt } = await inStartTurn(deps, rotate);
    const active = new Date(activeAt).toISOString();
    deps.audit.record({ audit: 'signing_keys.rotated', via: 'cli', kids, activeAt: active, immediate: immediate || previousWithdrawn, previousWithdrawn });
    return { kid: kids.RS256, kids, active_at: active };
  },
  human: (r) => `new signing keys: ${Object.entries(r.kids).map(([alg, kid]) => `${alg} ${kid}`).join(', ')}; they sign from ${r.active_at}`,
});

export const janitor = defineCommand({
  name: 'janitor',
  summary: 'delete expired and ended rows',
  description: 'Deletes expired codes, tokens past the 7-day audit window, ended sessions and withdrawn keys, in small batches.',
  usage: '',
  options: {},
  help: {},
  prints: '{"deleted":{table: count, …}}',
  async run(deps) {
    return { deleted: await runJanitor(deps) };
  },
  human: (r) => Object.entries(r.deleted).map(([table, n]) => `${table}: ${n} deleted`).join('\n'),
});
