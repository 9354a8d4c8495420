/**
 * Bounds on the work one body may make markdown-it do where its work is not bounded by the body's
 * length (found by attacks on the parser; the figures are markdown-it's before these bounds, for
 * bodies of 20,000 characters):
 *
 * - A label's search for its `]`, and what is done with a label found, run again in every image's
 *   alt text, which is parsed anew: `![` 50 times around `[` 49 times around `*` took 1.1–1.8 s;
 *   `![` 300 times around `İ ` repeated, 0.6 s (reference names are normalized, case and all).
 *   Each step of a search spends one unit of the body's budget, each character of an image's
 *   label found, or of any label when the body defines references, ten (link-labels.ts).
 * - A link's target and title are escaped into the page at every use, and a reference defines
 *   them once for thousands of uses: a title of 8,000 `"` used 3,000 times took 1 s and 670 MB
 *   before the page's 256 KB bound could refuse it. Each character of every link's and image's
 *   target and title spends one unit, once the inline text is parsed and before anything is written.
 *
 * The budget is 100 units a character and 100,000 more; ordinary text spends under one unit a
 * character, a table of numbers about 15. Past it the body is refused (posts.ts).
 *
 * Two bounds do not grow with the length:
 * - Block tokens: markdown-it fills in a table's missing cells, up to 65,536 a table, three
 *   tokens a cell (thirteen tables of 18,889 characters in all made 850,000 cells, 600 MB and
 *   1.6 s). A page within 256 KB holds at most about 90,000 block tokens (`<td></td>` is nine
 *   characters a cell, `<p>a</p>` eight for three tokens), so a parse may make 120,000.
 * - Quotes nest at most 16 deep (markdown.ts): a line continued lazily is scanned again at every
 *   level, and 100 levels over 10,000 lines took 0.25 s and 265 MB.
 */

/** The work a body of `length` characters may spend. */
export function workBudgetFor(length: number): number {
  return 100_000 + 100 * length;
}

/** Units a character of a label found costs: in an image it is parsed again; with references defined, normalized. */
export const LABEL_CHARACTER_WORK = 10;

/** The most block tokens a parse may make, whatever the length (see above). */
export const MAX_BLOCK_TOKENS = 120_000;

/** What markdown-it's rules can reach of a parse: its `env`, where the budget left is kept. */
export interface MarkdownEnv {
  workLeft?: number;
  /** How many quotes are open where the parse stands. */
  quoteDepth?: number;
}

/** Thrown from inside the parse when a body has spent its budget. */
export class MarkdownTooCostly extends Error {
  constructor() {
    super('the body costs more work to parse than its length allows');
    this.name = 'MarkdownTooCostly';
  }
}

/** Spends `units` of the parse's budget; a parse started without one (markdown-it used directly) spends nothing. */
export function spendWork(env: MarkdownEnv, units: number): void {
  if (env.workLeft === undefined) return;
  env.workLeft -= units;
  if (env.workLeft < 0) throw new MarkdownTooCostly();
}

/** Refuses a parse whose block tokens pass `MAX_BLOCK_TOKENS`; `tokens` is the parse's list of them. */
export function checkBlockTokens(env: MarkdownEnv, tokens: readonly unknown[]): void {
  if (env.workLeft !== undefined && tokens.length > MAX_BLOCK_TOKENS) throw new MarkdownTooCostly();
}

interface LinkToken {
  type: string;
  attrs: Array<[string, string]> | null;
  children: LinkToken[] | null;
}

/** Spends a unit for each character of every link's and image's target and title, each use counted. */
export function payForLinks(env: MarkdownEnv, blocks: readonly LinkToken[]): void {
  let characters = 0;
  const pending = [...blocks];
  for (let token = pending.pop(); token !== undefined; token = pending.pop()) {
    if (token.type === 'link_open' || token.type === 'image') {
      for (const [, value] of token.attrs ?? []) characters += value.length;
    }
    if (token.children) pending.push(...token.children);
  }
  spendWork(env, characters);
}
