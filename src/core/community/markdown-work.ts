/**
 * A bound on the work one body may make markdown-it do, in the two places where its work is not
 * bounded by the body's length: searching ahead for the `]` that ends a label, and filling in a
 * table's missing cells.
 *
 * - A label is searched for again in every image's alt text, which is parsed anew, so images
 *   nested around nested brackets cost the nesting depths times the length: `![` 50 times, `[`
 *   49 times, 19,600 `*` and the closing brackets took markdown-it 1.1 to 1.8 s of one thread.
 * - A table's missing cells are filled in, up to 65,536 a table: thirteen tables of one header
 *   line of 181 columns and 362 one-character rows (18,889 characters) made 850,000 cells,
 *   600 MB and 1.6 s before the HTML's bound could refuse the page.
 *
 * Each step of a label's search spends one unit of the body's budget, and each block token ten
 * (a token is an object kept until the page is written; a table's cells are block tokens, three
 * a cell). The budget is 100 units a character and 100,000 more, so only a body made to cost runs
 * out, and it is refused as a body whose page would be too large is.
 */

/** The work a body of `length` characters may spend. */
export function workBudgetFor(length: number): number {
  return 100_000 + 100 * length;
}

/** What markdown-it's rules can reach of a parse: its `env`, where the budget left is kept. */
export interface MarkdownEnv {
  workLeft?: number;
  /** How many of the parse's block tokens have been paid for. */
  blockTokensPaid?: number;
}

const BLOCK_TOKEN_WORK = 10;

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

/** Pays for the block tokens made since the last payment: `tokens` is the parse's list of them. */
export function payForBlockTokens(env: MarkdownEnv, tokens: readonly unknown[]): void {
  const unpaid = tokens.length - (env.blockTokensPaid ?? 0);
  env.blockTokensPaid = tokens.length;
  spendWork(env, unpaid * BLOCK_TOKEN_WORK);
}
