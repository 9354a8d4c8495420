/**
 * Waiting for another connection's SQLite lock without holding up the event loop. SQLite's own
 * wait (`busy_timeout`) sleeps in the calling thread: an instance waiting stops serving anything
 * else, and two instances in one process (the tests') each wait for a lock the other can only
 * give back once the wait has ended.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `attempt` (on a connection whose `busy_timeout` is 0) until it stops failing with
 * SQLITE_BUSY, pausing between tries: `firstPauseMs`, doubled at each try up to `maxPauseMs`.
 * Once the next pause would end past `waitMs`, the last SQLITE_BUSY is thrown; any other error at once.
 */
export async function untilNotBusy(attempt: () => void, waitMs: number, pauses: { firstPauseMs: number; maxPauseMs: number }): Promise<void> {
  const deadline = performance.now() + waitMs;
  for (let pause = pauses.firstPauseMs; ; pause = Math.min(pause * 2, pauses.maxPauseMs)) {
    try {
      attempt();
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || performance.now() + pause > deadline) throw error;
    }
    await sleep(pause);
  }
}
