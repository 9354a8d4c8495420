/** The figures the bench scripts read from repeated measurements. */

/** The middle value of `values` (the mean of the two middle ones when their count is even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
