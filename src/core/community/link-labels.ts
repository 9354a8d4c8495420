/**
 * Where a link's or an image's text ends (CommonMark 0.31.2 section 6.3): at the `]` that brings
 * the count of open brackets back to none, walking token by token so that a `]` inside a code span
 * or an autolink does not count.
 *
 * This is markdown-it's `parseLinkLabel` with one addition: a walk that failed is remembered. A
 * body of many `[` that never close made each `[` walk again the text the one before had walked,
 * as far as markdown-it's 100 nested labels: `[` and 200 `*`, repeated to 20,000 characters, cost
 * 150 ms, and nearly every body of `[` and a long enough run of other characters cost work in the
 * square of its length up to that bound.
 *
 * A failed walk passed each position with some count of open brackets and never closed (it reached
 * the end, or for a link a nested link). From any position, the walk is the same token by token
 * whoever makes it: markdown-it keeps each position's token in a cache, filled by the first walk.
 * So a later walk that reaches a position with as many open brackets or more cannot close either,
 * since it needs as many `]` or more, and it stops there with the same answer.
 */
import type { StateInline } from 'markdown-it';
import { LABEL_CHARACTER_WORK, type MarkdownEnv, spendWork } from './markdown-work.js';

const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]

/** The least count of open brackets a failed walk had at each position it passed. */
type Failures = Map<number, number>;

/**
 * One state is one inline text. A walk's end depends on where the text ends for it (a label's text
 * is parsed with the end moved to its `]`) and on whether a nested link ends it (links) or not
 * (images), so failures are kept apart by both.
 */
const failuresOfState = new WeakMap<StateInline, Map<number, Failures>>();

function failuresOf(state: StateInline, disableNested: boolean): Failures {
  let byWalk = failuresOfState.get(state);
  if (byWalk === undefined) failuresOfState.set(state, byWalk = new Map());
  const key = disableNested ? -1 - state.posMax : state.posMax;
  let failures = byWalk.get(key);
  if (failures === undefined) byWalk.set(key, failures = new Map());
  return failures;
}

/**
 * Where the walks under way record the positions they pass, and the open brackets on arrival, in
 * pairs: a walk's search for a nested label's end runs inside it and records above it. One array
 * for all, grown when needed, as a walk that succeeds records nothing and most walks succeed.
 */
let passed = new Int32Array(1024);
let passedTop = 0;

function pass(position: number, level: number): void {
  if (passedTop + 2 > passed.length) {
    const grown = new Int32Array(passed.length * 2);
    grown.set(passed);
    passed = grown;
  }
  passed[passedTop++] = position;
  passed[passedTop++] = level;
}

/**
 * The position of the `]` that ends the label opened at `start`, or -1; `state.pos` is left as it
 * was. Each step spends a unit of the body's work, and each character of a label found ten
 * where more work follows (markdown-work.ts): nested images search and read their labels again.
 */
export function parseLinkLabel(state: StateInline, start: number, disableNested = false): number {
  const max = state.posMax;
  const oldPos = state.pos;
  const failures = failuresOf(state, disableNested);
  const base = passedTop;
  let labelEnd = -1;
  let level = 1;

  try {
    state.pos = start + 1;
    while (state.pos < max) {
      spendWork(state.env as MarkdownEnv, 1);
      const failedAt = failures.get(state.pos);
      if (failedAt !== undefined && failedAt <= level) break;
      pass(state.pos, level);

      const marker = state.src.charCodeAt(state.pos);
      if (marker === CLOSE && --level === 0) {
        labelEnd = state.pos;
        // What may follow works on the label's text, in proportion to its length: an image's alt
        // text is parsed anew (images search with nested links allowed), a reference's name is
        // normalized when the body defines references. A link's label in a body without them
        // costs nothing more, so text such as a nested array pasted as is stays cheap.
        if (!disableNested || (state.env as { references?: unknown }).references !== undefined) {
          spendWork(state.env as MarkdownEnv, LABEL_CHARACTER_WORK * (labelEnd - start));
        }
        break;
      }
      const tokenStart = state.pos;
      state.md.inline.skipToken(state);
      if (marker === OPEN) {
        // A `[` that is text opens one more; one that starts a link ends a link's label.
        if (state.pos === tokenStart + 1) level++;
        else if (disableNested) break;
      }
    }

    if (labelEnd < 0) {
      for (let i = base; i < passedTop; i += 2) {
        const failedAt = failures.get(passed[i]!);
        if (failedAt === undefined || passed[i + 1]! < failedAt) failures.set(passed[i]!, passed[i + 1]!);
      }
    }
    return labelEnd;
  } finally {
    passedTop = base;
    state.pos = oldPos;
  }
}
