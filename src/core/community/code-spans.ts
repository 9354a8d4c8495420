/**
 * Code spans (CommonMark 0.31.2 section 6.1): a run of backticks opens one, closed by the next run
 * of exactly as many; an opener with no such run after it is text.
 *
 * This replaces markdown-it's own `backticks` rule, whose answer depends on the order it is asked
 * in. Once an opener has searched to the end of the text in vain, it takes every later opener of
 * that length as text, even one before it that has a closer. A link label searches ahead for its
 * `]` and meets openers before the page does, so the page then reads as text what the search read
 * as code (markdown-it issue 1201: `` [foo `bar` baz` `` loses its code span). The disagreement
 * also costs: in `` [\`_`[ `` repeated, every `[` the search had read inside code is a link
 * opener on the page, and each searches the rest of the body again, which is work in the square
 * of its length.
 *
 * Here the runs of an inline text are found once, in one pass, and an opener's closer is looked
 * up among the runs of its length: the answer depends on where the opener stands and nothing else.
 */
import type { StateInline } from 'markdown-it';

/** Where the runs of backticks of an inline text start, by length, each list in ascending order. */
type RunStarts = Map<number, number[]>;

/** One state is one inline text (a paragraph's, a heading's, a cell's); its runs are found when first asked. */
const runsOfState = new WeakMap<StateInline, RunStarts>();

const BACKTICK = 0x60;

export function codeSpan(state: StateInline, silent: boolean): boolean {
  const { src } = state;
  const start = state.pos;
  if (src.charCodeAt(start) !== BACKTICK) return false;

  // The opener is the backticks from here on; `start` can be inside a run, after an escaped backtick.
  let contentStart = start + 1;
  while (contentStart < state.posMax && src.charCodeAt(contentStart) === BACKTICK) contentStart++;
  const marker = src.slice(start, contentStart);

  const closer = firstAfter(runStartsOf(state).get(marker.length), start);
  if (closer === undefined) {
    if (!silent) state.pending += marker;
    state.pos = contentStart;
    return true;
  }
  if (!silent) {
    const token = state.push('code_inline', 'code', 0);
    token.markup = marker;
    // Line endings become spaces; one space is stripped from each end when both have one and the
    // content is not all spaces (CommonMark 6.1), as markdown-it's own rule does.
    token.content = src.slice(contentStart, closer).replace(/\n/g, ' ').replace(/^ (.+) $/, '$1');
  }
  state.pos = closer + marker.length;
  return true;
}

function runStartsOf(state: StateInline): RunStarts {
  let runs = runsOfState.get(state);
  if (runs === undefined) {
    runs = new Map();
    const { src } = state;
    for (let start = src.indexOf('`'); start !== -1;) {
      let end = start + 1;
      while (end < src.length && src.charCodeAt(end) === BACKTICK) end++;
      const starts = runs.get(end - start);
      if (starts) starts.push(start);
      else runs.set(end - start, [start]);
      start = src.indexOf('`', end);
    }
    runsOfState.set(state, runs);
  }
  return runs;
}

/**
 * The first of `starts` (ascending) after `position`, by halving. A run that starts after the
 * opener's first backtick starts after its last one: runs are whole, and the opener is in one.
 */
function firstAfter(starts: number[] | undefined, position: number): number | undefined {
  if (starts === undefined) return undefined;
  let low = 0;
  let high = starts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (starts[middle]! > position) high = middle;
    else low = middle + 1;
  }
  return starts[low];
}
