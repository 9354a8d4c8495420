/**
 * Whether Unicode normalisation read a given string. NFC and NFKC are built-ins, which counted work
 * (work-count.ts) cannot see, so this watches `String.prototype.normalize` for a marker.
 */

/** Runs `work`, and says whether NFKC (or any normal form) read a string holding `marker`. */
export async function normalizes(marker: string, work: () => Promise<unknown>): Promise<boolean> {
  const normalize = String.prototype.normalize;
  let seen = false;
  String.prototype.normalize = function (this: string, form?: string) {
    if (String(this).includes(marker)) seen = true;
    return normalize.call(this, form);
  };
  try {
    await work();
  } finally {
    String.prototype.normalize = normalize;
  }
  return seen;
}
