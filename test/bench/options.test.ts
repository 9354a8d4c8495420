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

test('a count that is no whole number is one line naming the option, exit code 2, before anything is built or run', () => {
  for (const [option, typed, least] of [['--seconds', 'abc', 1], ['--rounds', '0', 1], ['--connections', '1.5', 1], ['--warmup', '-1', 0]] as const) {
    const { code, stdout, stderr } = bench(`${option}=${typed}`);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `bench: ${option} must be a whole number from ${least}: got '${typed}'; npm run bench -- --help lists the options\n`);
  }
});

test('a value that looks like an option is one line, its first sentence, exit code 2', () => {
  const { code, stderr } = bench('--warmup', '-1');
  assert.equal(code, 2, stderr);
  assert.equal(stderr, 'bench: Option \'--warmup\' argument is ambiguous; npm run bench -- --help lists the options\n');
});

test('--only naming an unknown scenario is one line naming it and the known ones, exit code 2, before anything is built or run', () => {
  const known = 'a, b1, b2, b3, b4, i, c1, c2, d, d2, e1, e2, e3, h1, h2, h4, j1, j2, j3';
  for (const [typed, unknown] of [['nosuch', "'nosuch'"], ['a,nosuch', "'nosuch'"], ['a,', "''"], ['x,b1,y', "'x', 'y'"]] as const) {
    const { code, stdout, stderr } = bench('--only', typed);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `bench: --only names no scenario ${unknown}: the scenarios are ${known}; npm run bench -- --help lists the options\n`, typed);
  }
});

test('--help as the value of an option is no request for help: refused as ambiguous, exit code 2; written --note=--help it is the value', () => {
  for (const option of ['--note', '--only', '--out']) {
    const { code, stdout, stderr } = bench(option, '--help');
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '', option);
    assert.equal(stderr, `bench: Option '${option}' argument is ambiguous; npm run bench -- --help lists the options\n`);
  }
  // The mode's words are options only where parseArgs reads options, and a value names none.
  const { code, stderr } = bench('--note', '--posts-pieces');
  assert.equal(code, 2, stderr);
  assert.equal(stderr, 'bench: Option \'--note\' argument is ambiguous; npm run bench -- --help lists the options\n');
  // Accepted as the note, and the run goes on to the next check: the count below is refused.
  const explicit = bench('--note=--help', '--seconds=0');
  assert.equal(explicit.code, 2, explicit.stderr);
  assert.equal(explicit.stderr, 'bench: --seconds must be a whole number from 1: got \'0\'; npm run bench -- --help lists the options\n');
});

test('--help as the value of --iterations (or any option a mode takes a value for) is no request for help: refused as ambiguous, exit code 2', () => {
  for (const args of [['--avatar-upload', '--iterations'], ['--avatar-upload', '--route', '--iterations'], ['--avatar-upload', '--child'], ['--posts-pieces', '--iterations']]) {
    const { code, stdout, stderr } = bench(...args, '--help');
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '', args.join(' '));
    assert.equal(stderr, `bench: Option '${args.at(-1)}' argument is ambiguous; npm run bench -- --help lists the options\n`, args.join(' '));
  }
});

test('--iterations that is no whole number from 1 is one line naming it, exit code 2, before anything is measured', () => {
  for (const mode of ['--avatar-upload', '--posts-pieces']) {
    for (const typed of ['0', '-1', 'abc', '1.5']) {
      const { code, stdout, stderr } = bench(mode, `--iterations=${typed}`);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.equal(stderr, `bench: --iterations must be a whole number from 1: got '${typed}'; npm run bench -- --help lists the options\n`, `${mode} ${typed}`);
    }
  }
});

test('--only with --token-scale or --staff-overview, which run no scenario it names, is one line saying so, exit code 2, before anything is built or run', () => {
  for (const [mode, runs] of [['--token-scale', '/me alone'], ['--staff-overview', 'GET /admin alone']] as const) {
    const { code, stdout, stderr } = bench(mode, '--only', 'a');
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `bench: --only picks scenarios of the comparison run; ${mode} measures ${runs}; npm run bench -- --help lists the options\n`);
  }
});

test('the benches run on their own refuse a value that looks like an option and a count that is no whole number: one line, exit code 2', () => {
  const own = (file: string, ...args: string[]) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', `bench/${file}`, ...args], { encoding: 'utf8', timeout: 60_000 });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr };
  };
  for (const [file, option, usage] of [
    ['home-hidden-posts.ts', '--calls', 'npx tsx bench/home-hidden-posts.ts [--hidden 0,5000,50000] [--calls 200] [--name NAME] [--out FILE]'],
    ['mcp-inprocess.ts', '--rounds', 'npx tsx bench/mcp-inprocess.ts [--calls 20000] [--rounds 5] [--out FILE]'],
  ] as const) {
    const ambiguous = own(file, option, '--help');
    assert.equal(ambiguous.code, 2, ambiguous.stderr);
    assert.equal(ambiguous.stdout, '');
    assert.equal(ambiguous.stderr, `bench: Option '${option}' argument is ambiguous; usage: ${usage}\n`);
    const zero = own(file, `${option}=0`);
    assert.equal(zero.code, 2, zero.stderr);
    assert.equal(zero.stderr, `bench: ${option} must be a whole number from 1: got '0'; usage: ${usage}\n`);
  }
});

test('--token-counts is --token-scale\'s alone and its two counts are checked as usage; --token-scale and --staff-overview are one run or the other: one line, exit code 2, before anything is built or run (attack82)', () => {
  // --seconds=0 after each: a run that got past these checks would stop at it, not start a bench.
  for (const [args, message] of [
    [['--token-counts', '5,10'], '--token-counts gives --token-scale\'s two stored token counts; without --token-scale nothing reads it'],
    [['--staff-overview', '--token-counts', '5,10'], '--token-counts gives --token-scale\'s two stored token counts; without --token-scale nothing reads it'],
    [['--token-scale', '--token-counts=abc,10'], '--token-counts must be a whole number from 1: got \'abc\''],
    [['--token-scale', '--token-counts=1000,1000'], '--token-counts must be two counts, the first below the second: got \'1000,1000\''],
    [['--token-scale', '--token-counts=1000'], '--token-counts must be two counts, the first below the second: got \'1000\''],
    [['--token-scale', '--token-counts=1e3,1e6'], '--token-counts must be a whole number from 1: got \'1e3\''],
    [['--token-scale', '--staff-overview'], '--token-scale and --staff-overview are two runs of their own: give one'],
  ] as const) {
    const { code, stdout, stderr } = bench(...args, '--seconds=0');
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `bench: ${message}; npm run bench -- --help lists the options\n`, args.join(' '));
  }
});
