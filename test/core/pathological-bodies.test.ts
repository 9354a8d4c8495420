/**
 * A post body costs the server time in proportion to its length, whatever it holds (issue 16
 * item 2, INTERFACE section 7). Bodies made to hurt: runs of the characters that start Markdown
 * constructs (`[`, `![`, `*`, `` ` ``, `<a`, `&#`, `_`) and mixes of them, up to the 20,000
 * characters a body may hold.
 *
 * No assertion here reads a clock ("speed is measured by benchmark scripts, never by timed
 * assertions in tests"). Two measures instead:
 *
 * 1. Work is counted. V8's precise block coverage counts every execution of every block of
 *    JavaScript (each turn of each loop, each call) in markdown-it, its dependencies and our code.
 *    The count does not depend on the machine or its load (it moves by a few per cent between
 *    runs, with V8's lazy compilation), so the test cannot flake. A body ten times as long may
 *    cost at most twenty times the work: linear code comes near ten (11.6 the most seen over
 *    hundreds of mixes), a quadratic walk near a hundred.
 * 2. What the count cannot see, work inside the regular-expression engine and other built-ins
 *    (the old `plainText()` spent its second there), is bounded by a hard stop: each body is made
 *    in a child process that is ended if it has not answered within 10 seconds. Every one of
 *    these bodies takes a few tenths of a second at most on this machine, so only a catastrophic,
 *    seconds-long case can reach the stop, never the variance of a busy machine. (The old
 *    regular expressions, at about a second a body, would not have reached it either: what
 *    removed them is that our code on this path uses none, and that the API reads the
 *    stored excerpt, which test/api/resources.test.ts proves.)
 */
import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { layOut } from '../../src/core/community/markdown.js';
import { InputError } from '../../src/core/errors.js';
import { BODY_MAX_LENGTH, renderBody } from '../../src/core/community/posts.js';
import { blocksExecuted, startCountingWork, stopCountingWork } from '../support/work-count.js';

/** What a hostile body is made of: the seven runs issue 16 names, and characters that pair with them. */
const FRAGMENTS = ['[', '![', '*', '`', '<a', '&#', '_'] as const;
const GLUE = [']', '(', ')', ' ', '\n', 'a', '>', '-', '|', '\\', '~', '#', '1', ';', '"', ':'] as const;

/** Patterns repeated to the full length: each run alone, and mixes known to have slowed Markdown parsers. */
const PATTERNS = [
  ...FRAGMENTS,
  '[a', '[]', '[a](', '[a][', '](', '[\n', '![](', '**_', '*a', '_a', 'a_', '`a', '<a ', '&#1', '&amp;', '* a\n', '> ', '- ', '1. ', '| a ', '\\',
  // fast-check's find: markdown-it's code-span rule read the page's backticks unlike a link label's search ahead (code-spans.ts)
  '[\\`_`[',
];

/** Patterns fast-check makes: up to eight pieces, mostly the hostile fragments. */
const mixedPattern = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FRAGMENTS) }, { weight: 1, arbitrary: fc.constantFrom(...GLUE) }), { minLength: 1, maxLength: 8 })
  .map((pieces) => pieces.join(''));

function bodyOf(pattern: string, length: number): string {
  return pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
}

/** What the server does with a body when it is written: one reading for its page and its excerpt's text. */
function handle(body: string): void {
  layOut(body);
}

// ---- 1. Work counted ----------------------------------------------------------------------------

const SHORT = BODY_MAX_LENGTH / 10;

/**
 * Repeats of `pattern` ending with its first `tail` characters, about 2,000 characters and ten
 * times as many repeats with the same end, at most 20,000. The two end alike because how a body
 * ends can change how all of it parses (a closing backtick run, or none), and a comparison of two
 * such parses would measure the difference of the parses, not the growth.
 */
function assertLinear(pattern: string, tail = 0): void {
  const repeats = Math.floor(SHORT / pattern.length) - 1;
  const end = pattern.slice(0, tail % pattern.length);
  const shortBody = pattern.repeat(repeats) + end;
  const longBody = pattern.repeat(10 * repeats) + end;
  handle(shortBody); // compiled and warm: the first call's one-off work is not the body's
  const short = blocksExecuted(() => handle(shortBody));
  const long = blocksExecuted(() => handle(longBody));
  assert.ok(long <= 20 * short, `${JSON.stringify(pattern)} ending ${JSON.stringify(end)}: ${short} blocks for ${shortBody.length} characters, ${long} for ${longBody.length} (${(long / short).toFixed(1)} times)`);
}

before(startCountingWork);
after(stopCountingWork);

test('work counting sees the turns of a loop: a quadratic walk is told from a linear one', () => {
  const linear = (body: string) => { let n = 0; for (let i = 0; i < body.length; i++) n += body.charCodeAt(i); return n; };
  const quadratic = (body: string) => { let n = 0; for (let i = 0; i < body.length; i += 100) n += linear(body); return n; };
  const growth = (walk: (body: string) => number) =>
    blocksExecuted(() => walk(bodyOf('[', BODY_MAX_LENGTH))) / blocksExecuted(() => walk(bodyOf('[', SHORT)));
  assert.ok(growth(linear) <= 20, `linear: ${growth(linear)}`);
  assert.ok(growth(quadratic) > 20, `quadratic: ${growth(quadratic)}`);
});

test('each run of [, ![, *, `, <a, &# or _, and each known mix, costs work in proportion to its length, whatever part of it ends the body', () => {
  for (const pattern of PATTERNS) for (let tail = 0; tail < pattern.length; tail++) assertLinear(pattern, tail);
});

test('a label that never closes, one in every 50 to 400 characters, costs work in proportion to the length: a failed search for its `]` is not walked again', () => {
  for (const gap of [200, 400, 50]) {
    assertLinear(`[${'*'.repeat(gap - 1)}`);
    assertLinear(`![${'_'.repeat(gap - 2)}`);
  }
});

/** Bodies of about `length` characters that cost markdown-it work beyond their length's bound (src/core/community/markdown-work.ts). */
const COSTLY_SHAPES: Record<string, (length: number) => string> = {
  'images nested around nested brackets': (length) => `${'!['.repeat(50)}${'['.repeat(49)}${'*'.repeat(length - 398)}${']'.repeat(49)}${'](u)'.repeat(50)}`,
  'images nested around a label of a reference\'s name': (length) => `[r]: /u\n\n${'!['.repeat(300)}${'İ '.repeat((length - 909) >> 1)}${']'.repeat(300)}`,
  'a reference whose title is written at every use': (length) => `[r]: /u '${'"'.repeat(length * 0.4)}'\n\n${'![r]'.repeat(length * 0.15)}`,
  'tables of filled-in cells': (length) => {
    const table = `|${'a|'.repeat(181)}\n|${'-|'.repeat(181)}\n${'a\n'.repeat(362)}\n`;
    return table.repeat(Math.max(1, Math.floor(length / table.length)));
  },
};

/** The work of `renderBody(body)`, whether it lays the body out or refuses it as too costly. */
function workOfWriting(body: string): number {
  return blocksExecuted(() => {
    try {
      renderBody(body);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
    }
  });
}

test('a body made to cost more than its length allows (nested images, references written at every use, tables of filled-in cells) is refused, having spent work in proportion to its length', () => {
  for (const [name, shape] of Object.entries(COSTLY_SHAPES)) {
    workOfWriting(shape(SHORT));
    const short = workOfWriting(shape(SHORT));
    const long = blocksExecuted(() => assert.throws(() => renderBody(shape(BODY_MAX_LENGTH)), /too much work to lay out/, name));
    assert.ok(long <= 20 * short, `${name}: ${short} blocks for ${SHORT} characters, ${long} for ${BODY_MAX_LENGTH}`);
  }
});

test('quotes nested however deep cost at most a few times one quote over the same lines: a `>` past 16 levels is text', () => {
  const lines = 'b\n'.repeat(9_950);
  const deep = `${'>'.repeat(100)}a\n${lines}`;
  const flat = `>a\n${lines}${'b\n'.repeat(49)}`;
  workOfWriting(deep);
  const deepWork = workOfWriting(deep);
  const flatWork = workOfWriting(flat);
  assert.ok(deepWork <= 8 * flatWork, `${deepWork} blocks nested, ${flatWork} flat`);
});

test('any mix of those runs costs work in proportion to its length', () => {
  fc.assert(fc.property(mixedPattern, fc.nat(), (pattern, tail) => { assertLinear(pattern, tail); }), { numRuns: 40 });
});

// ---- 2. A hard stop for the rest ----------------------------------------------------------------

/** Far above the cost of any of these bodies, far below the minutes of a catastrophic case (see the top). */
const HARD_STOP_MS = 10_000;

/** Every `<` on the page opens or closes one of markdown-it's tags: the member's markup is all text. */
const ONLY_MARKDOWN_TAGS = /<(?!\/?(p|em|strong|s|code|pre|a|img|ul|ol|li|blockquote|h[1-6]|hr|br|table|thead|tbody|tr|th|td)[ >])/;

/** A child process that makes excerpts and pages; the test ends it when one takes longer than the hard stop. */
class BodyMaker {
  private child: ChildProcess | undefined;

  /** Starts the child and waits until it has loaded the code, so loading never counts against the stop. */
  async start(): Promise<void> {
    const child = this.child = fork(fileURLToPath(new URL('../support/markdown-child.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] });
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the child ended (${code}) while starting`)));
    });
    child.removeAllListeners('message').removeAllListeners('exit');
  }

  /** The excerpt and the page of `body`, or a failure naming the body if they take longer than the hard stop. */
  async make(body: string): Promise<{ excerpt: string; page: string }> {
    if (!this.child) await this.start();
    const child = this.child!;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await new Promise((resolve, reject) => {
        timer = setTimeout(() => {
          this.stop();
          reject(new Error(`no excerpt and page within ${HARD_STOP_MS} ms for ${body.length} characters starting ${JSON.stringify(body.slice(0, 40))}`));
        }, HARD_STOP_MS);
        child.once('message', resolve as (message: unknown) => void);
        child.once('exit', (code) => reject(new Error(`the child ended (${code}) on ${JSON.stringify(body.slice(0, 40))}`)));
        child.send(body);
      });
    } finally {
      clearTimeout(timer);
      child.removeAllListeners('message').removeAllListeners('exit');
    }
  }

  stop(): void {
    this.child?.kill('SIGKILL');
    this.child = undefined;
  }
}

test('every body of up to 20,000 hostile characters gets its excerpt and its page, and the page is only Markdown\'s own markup', async () => {
  const maker = new BodyMaker();
  const hostileBody = fc.tuple(fc.oneof(fc.constantFrom(...PATTERNS), mixedPattern), fc.integer({ min: 1, max: BODY_MAX_LENGTH }))
    .map(([pattern, length]) => bodyOf(pattern, length));
  const check = (made: { excerpt: string; page: string }, body: string) => {
    assert.ok(made.excerpt.length <= 140, JSON.stringify(body.slice(0, 40)));
    assert.doesNotMatch(made.page, ONLY_MARKDOWN_TAGS, JSON.stringify(body.slice(0, 40)));
  };
  try {
    await maker.start();
    for (const pattern of PATTERNS) {
      const body = bodyOf(pattern, BODY_MAX_LENGTH);
      check(await maker.make(body), body);
    }
    await fc.assert(fc.asyncProperty(hostileBody, async (body) => { check(await maker.make(body), body); }), { numRuns: 40, endOnFailure: true });
  } finally {
    maker.stop();
  }
});
