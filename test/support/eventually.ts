/** Polls `condition` every 100 ms until it holds or `ms` have passed; says whether it held. */
export async function holdsWithin(ms: number, condition: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until `condition` holds, looking again every 10 ms: for a state the test cannot be told of
 * (a request that reached a server, a fetch waiting in a line). No deadline of its own: however
 * slowly a loaded machine gets there, the test's timeout is the only limit.
 */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}
