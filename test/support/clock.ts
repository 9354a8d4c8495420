import type { Clock, Instant } from '../../src/core/time.js';

/** A clock the test moves by hand, for expiry rules. */
export class TestClock implements Clock {
  constructor(private current: Instant = Date.UTC(2026, 10, 22, 0, 30, 48)) {}
  now(): Instant {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
