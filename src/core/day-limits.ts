/**
 * Limits on what one account makes in any 24 hours (threat model T70: personal tokens, apps a
 * member registers), counted from the stored rows' times, so they hold across instances and
 * restarts with no memory of their own.
 */
import { InputError } from './errors.js';
import { type Instant, days, formatUtc, retryWait } from './time.js';

const DAY_MS = days(1);

/** What a day's limit is refused with: the form's field, the catalogs' key, and the English words before "; try again after …". */
export interface DayLimitWords {
  field: string;
  key: string;
  english: string;
}

/**
 * The refusal of one more of what an account made `limit` of in the last 24 hours, saying how long
 * to wait (waiting is the only way: revoking or deactivating one makes no room in the day), or
 * `undefined` while it has room. `madeSince(since, limit)` reads the instants of those made since
 * `since`, newest first, at most `limit`. The day rolls: it admits one more once the `limit`-th
 * newest is 24 hours old, so no midnight (the site's UTC+8 or UTC) lets a script make twice the
 * limit either side of it.
 */
export async function dayLimitRefusal(madeSince: (since: Instant, limit: number) => Promise<readonly Instant[]>, limit: number, now: Instant, words: DayLimitWords): Promise<InputError | undefined> {
  const oldestCounted = (await madeSince(now - DAY_MS, limit))[limit - 1];
  if (oldestCounted === undefined) return undefined;
  const reopensAt = oldestCounted + DAY_MS;
  return InputError.worded(words.field, `${words.english}; try again after ${formatUtc(Math.ceil(reopensAt / 1000) * 1000)}`,
    { key: words.key, values: { max: limit, ...retryWait(Math.ceil((reopensAt - now) / 1000)) } });
}
