/**
 * How long a password's verification takes with each set of argon2 parameters a stored hash may
 * carry, so that a wrong password is answered as slowly whichever set its account's hash was made
 * with. A hash of an earlier set (decision 66's 19 MiB and two passes) verifies about 1.8 times as
 * slowly as one of today's, so a wrong password was answered about 5 ms later for an account whose
 * member had not signed in since the change: anyone could tell who had. A right password is not
 * held: its sender learns nothing from the time that the answer does not already say.
 */

/**
 * A wrong answer is held to at most this many times its own verification's time: a bound for a
 * set timed wrongly, not for the ratios met. Between processes they differ widely: 1.8 in the
 * server, up to 5 in a process whose allocator hands the earlier set's larger block back to the
 * system between verifications. A hold is a timer, costing no CPU and keeping no one's turn.
 */
export const MAX_HOLD_FACTOR = 6;

/** Parameter sets remembered, at most: a database holds a handful, and the map cannot grow past this. */
const SETS_KEPT = 8;

/** Each set's time is the median of its latest verifications, this many: one slow one does not set it. */
const TIMES_KEPT = 9;

/** The PHC string's head naming the algorithm, version and parameters (`$argon2id$v=19$m=…,t=…,p=…`). */
export function parametersOf(passwordHash: string): string {
  return passwordHash.split('$', 4).join('$');
}

function median(times: number[]): number {
  return [...times].sort((a, b) => a - b)[times.length >> 1]!;
}

export class VerificationTimes {
  private readonly latest = new Map<string, number[]>();

  /** A verification (or hash) with `parameters` took `ms` in its turn. */
  record(parameters: string, ms: number): void {
    const times = this.latest.get(parameters);
    if (times !== undefined) {
      times.push(ms);
      if (times.length > TIMES_KEPT) times.shift();
    } else if (this.latest.size < SETS_KEPT) this.latest.set(parameters, [ms]);
  }

  /**
   * Milliseconds to hold a wrong answer whose verification with `parameters` took `ms`: what the
   * slowest set takes beyond its own at today's pace (the ratio of their medians, so a busy
   * machine that slows both holds in proportion), at most `MAX_HOLD_FACTOR` times `ms` in all.
   */
  holdAfterWrong(parameters: string, ms: number): number {
    const own = this.latest.get(parameters);
    if (own === undefined) return 0;
    const ownMedian = median(own);
    if (ownMedian <= 0) return 0;
    const slowest = Math.max(...[...this.latest.values()].map(median));
    return ms * (Math.min(slowest / ownMedian, MAX_HOLD_FACTOR) - 1);
  }
}
