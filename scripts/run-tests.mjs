// Runs every test/**/*.test.ts with Node's test runner (Node 20's --test takes no glob).
// Arguments narrow the run to files whose path contains one of them. dist/ is brought up to date
// first: the tests of the command line, `npm start` and the cluster script run the compiled
// service, as operators do.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { ensureBuilt } from './build.mjs';

try {
  ensureBuilt();
} catch (error) {
  process.stderr.write(`run-tests: ${error.message}\n`);
  process.exit(1);
}

const filters = process.argv.slice(2);
const files = readdirSync('test', { recursive: true })
  .map((f) => `test/${f}`)
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
// Node's own reporter as it would choose (spec on a terminal, TAP otherwise), then the failures
// again at the end.
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
  '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/failures-reporter.mjs',
  '--test-reporter-destination=stdout',
];
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...reporters, ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
