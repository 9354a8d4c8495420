/**
 * `text` as a Chinese input method in full-width mode types it: each printable ASCII character as
 * its full-width form (U+FF01–U+FF5E), which NFKC (Unicode UAX #15) reads back as that character.
 */
export function fullWidth(text: string): string {
  return text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
}
