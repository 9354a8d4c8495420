// The command that serves: Node's flags, the process's environment and the file it runs. `npm start`
// runs it (package.json: `exec $(node scripts/service-node-flags.mjs)`), and whatever else starts the
// service (the bench, `npm run cluster`) starts it the same way, so its memory and speed are what
// operators get (docs/performance.md, decisions 18 and 67).
import { pathToFileURL } from 'node:url';

/** glibc's malloc hands large blocks back (decision 30); mimalloc commits its segments as used (decision 55). */
const PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: '131072', MIMALLOC_EAGER_COMMIT: '0' };
/** The bundled server (scripts/bundle-service.mjs, decision 45). */
const ENTRY = 'dist/bundle/main.js';

/** The embedded database: no DATABASE_URL, or a `sqlite:` one (the settings refuse any other but PostgreSQL's). */
function embedded(databaseUrl) {
  return databaseUrl === undefined || databaseUrl === '' || databaseUrl.startsWith('sqlite:');
}

/**
 * V8's young generation is two semi-spaces, held whole once grown. On SQLite, 4 MB each keeps the
 * server under 150 MB with sign-in's hash at no measured cost, as its lookups are synchronous and a
 * request's objects die young; on PostgreSQL they live across a round trip's awaits, and 4 MB cost
 * a `/me` 66 % more CPU there, so it keeps 8 (decision 67).
 */
export function serviceNodeFlags(databaseUrl = process.env.DATABASE_URL) {
  return [`--max-semi-space-size=${embedded(databaseUrl) ? 4 : 8}`, '--max-old-space-size=1536'];
}

/** The environment the service's process gets on top of the caller's. */
export function serviceProcessEnv() {
  return { ...PROCESS_ENV };
}

export function serviceEntry() {
  return ENTRY;
}

// Run as a script, it prints the command for this environment's DATABASE_URL, one word per argument.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const environment = Object.entries(PROCESS_ENV).map(([name, value]) => `${name}=${value}`);
  process.stdout.write(`${['env', ...environment, 'node', ...serviceNodeFlags(), ENTRY].join(' ')}\n`);
}
