/** The waits between attempts of the durable queues (back-channel logouts, mail). */

/**
 * The wait after the `attempts`-th failed attempt: `firstMs` doubled per earlier attempt, at most
 * `capMs`, of which a random half ("equal jitter"), so receivers that came back at the same moment
 * are not all called again at the same moment.
 */
export function backoffDelayMs(attempts: number, firstMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, firstMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
