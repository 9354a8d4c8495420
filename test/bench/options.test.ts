/** `npm run bench`'s options as typed: what it runs, run as a process (tsx bench/run.ts); no load is run. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/** The bench with `args`, as `npm run bench -- args` runs it; bounded in time, so a start that hangs fails. */
function bench(...args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

test('--help prints every option on a line of its own and exits 0', () => {
  const { code, stdout, stderr } = bench('--help');
  assert.equal(code, 0, stderr);
  assert.equal(stderr, '');
  const lines = stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^usage: npm run bench -- \[options\]$/);
  for (const option of ['--seconds', '--rounds', '--only', '--peer-store', '--token-scale', '--staff-overview', '--avatar-upload', '--posts-pieces', '--help']) {
    assert.equal(lines.filter((line) => line.trimStart().startsWith(`${option} `)).length, 1, option);
  }
  assert.ok(lines.slice(1).every((line) => /^ {2}--[a-z-]+( VALUE)? +\S/.test(line)), stdout);
});

test('an unknown option is one line naming it and pointing to --help, exit code 2, no stack trace', () => {
  for (const args of [['--nope'], ['--rounds', '2', '--nope'], ['--posts-pieces', '--nope']]) {
    const { code, stdout, stderr } = bench(...args);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, 'bench: Unknown option \'--nope\'; npm run bench -- --help lists the options\n', args.join(' '));
  }
});
