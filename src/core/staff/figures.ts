/**
 * The overview's figures (INTERFACE section 14): sign-ins, new members, tokens issued, refusals
 * and 429s, a day at a time in the site's time zone. Counting must cost the requests nothing: each
 * instance counts in memory and adds its counts to the `daily_figures` rows every few seconds (one
 * statement), so no request writes a row others write too. A crash loses at most those seconds.
 * New members are counted from the accounts themselves, by the database, a day's range at a time.
 */
import type { AuditEvent, AuditSink } from '../audit.js';
import { calendarDay, dayIn, dayStartIn } from '../site-time.js';
import type { Stores } from '../stores.js';
import type { Instant } from '../time.js';
import { WriteTurns } from '../write-turns.js';
import { type DailyCount, FIGURES, type Figure } from './ports.js';

export const OVERVIEW_DAYS = 14;

/** The figure an audit event counts towards, if any. */
export function figureOf(event: AuditEvent): Figure | undefined {
  switch (event.audit) {
    case 'sign_in.succeeded': return 'sign_ins';
    case 'token.issued': case 'token.refreshed': return 'tokens_issued';
    // A refused sign-in; one refused for being past a limit is a 429, counted as such.
    case 'sign_in.failed': return event.reason === 'throttled' ? undefined : 'refusals';
    default: return undefined;
  }
}

/** An instance's counts not yet added to the database. */
export class FigureCounter {
  private readonly pending = new Map<string, DailyCount>();
  /** The day last counted on and the instants it starts and ends at in the zone: most events fall on it. */
  private today = { day: '', from: 0, until: 0 };
  private readonly turns = new WriteTurns();

  constructor(private readonly timeZone: string) {}

  /**
   * The day `at` falls on in the zone. Formatting it with `Intl` for every event (a refresh, a
   * sign-in) cost more than all the rest of counting; the day's bounds are found once a day
   * (`dayStartIn`), so the day changes exactly at the zone's midnight.
   */
  private dayOf(at: Instant): string {
    const today = this.today;
    if (at >= today.from && at < today.until) return today.day;
    const day = dayIn(at, this.timeZone);
    this.today = { day, from: dayStartIn(day, this.timeZone), until: dayStartIn(calendarDay(day, 1), this.timeZone) };
    return day;
  }

  count(figure: Figure, at: Instant): void {
    const day = this.dayOf(at);
    const key = `${day} ${figure}`;
    const held = this.pending.get(key);
    if (held) held.count += 1;
    else this.pending.set(key, { day, figure, count: 1 });
  }

  /** The audit sink `sink` that also counts what it records. */
  counting(sink: AuditSink, now: () => Instant): AuditSink {
    return {
      record: (event, reqId) => {
        const figure = figureOf(event);
        if (figure) this.count(figure, now());
        sink.record(event, reqId);
      },
    };
  }

  /**
   * Adds the counts to the database and says how many; counts that could not be written are kept
   * for the next time. Settles once every count made before the call is written: after a flush
   * under way (the instance's timer's) if there is one (`WriteTurns`).
   */
  flush(stores: Stores): Promise<number> {
    return this.turns.run(async () => {
      if (this.pending.size === 0) return 0;
      const counts = [...this.pending.values()];
      this.pending.clear();
      try {
        // In a transaction, as the views are (src/core/community/views.ts): never in SQLite's busy wait.
        await stores.transaction((tx) => tx.dailyFigures.add(counts));
        return counts.reduce((sum, c) => sum + c.count, 0);
      } catch (error) {
        for (const c of counts) {
          const key = `${c.day} ${c.figure}`;
          const held = this.pending.get(key);
          if (held) held.count += c.count;
          else this.pending.set(key, c);
        }
        throw error;
      }
    });
  }
}

export interface Overview {
  /** The days, oldest first, `YYYY-MM-DD` in the site's zone; the last is today. */
  days: string[];
  /** Each figure's count on each of `days`. */
  counts: Record<Figure, number[]>;
}

/** The last 14 days' figures, today included. */
export async function overview(stores: Stores, now: Instant, timeZone: string): Promise<Overview> {
  const today = dayIn(now, timeZone);
  const days = Array.from({ length: OVERVIEW_DAYS }, (_, i) => calendarDay(today, i - OVERVIEW_DAYS + 1));
  const index = new Map(days.map((day, i) => [day, i]));
  const counts = Object.fromEntries(FIGURES.map((f) => [f, days.map(() => 0)])) as Record<Figure, number[]>;
  // Each day's first instant in the site's zone, and tomorrow's, bound the days' ranges.
  const bounds = [...days, calendarDay(today, 1)].map((day) => dayStartIn(day, timeZone));
  const [stored, joined] = await Promise.all([stores.dailyFigures.since(days[0]!), stores.memberDirectory.countJoined(bounds)]);
  for (const c of stored) {
    const i = index.get(c.day);
    if (i !== undefined && c.figure !== 'new_members') counts[c.figure][i]! += c.count;
  }
  counts.new_members = joined;
  return { days, counts };
}
