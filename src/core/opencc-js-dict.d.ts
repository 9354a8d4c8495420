/** OpenCC's character table, imported alone (`text.ts`) rather than the phrase tables of a whole converter; the package declares only its converters. */
declare module 'opencc-js/dict/TSCharacters' {
  /** Pairs "traditional simplified…" parted by "|". */
  const dict: string;
  export default dict;
}
