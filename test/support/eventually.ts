/** Polls `condition` every 100 ms until it holds or `ms` have passed; says whether it held. */
export async function holdsWithin(ms: number, condition: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
