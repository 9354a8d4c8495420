/** Text people type and we store: trimmed, within its length, and free of control characters. */
import { InputError } from './errors.js';

/**
 * Bidirectional embeddings, overrides and isolates reorder what a reader sees ("Trojan Source",
 * CVE-2021-42574): no stored line holds them.
 */
const BIDI_CONTROLS = '\u202a-\u202e\u2066-\u2069';
/**
 * Characters that show nothing or steer the text rather than write it: controls (C0, DEL, C1),
 * format characters (zero-width spaces and joiners, direction marks, tags, soft hyphens…), line
 * and paragraph separators, and every default-ignorable code point (variation selectors, Hangul
 * fillers…). Two names that look the same can differ by them, so a `name` (an application's or a
 * category's, shown to people deciding whom to trust) holds none.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
/**
 * Something a reader sees: a character that is not blank, invisible or a lone combining mark
 * (U+2800 is a blank Braille cell, U+1D159 a null notehead: symbols that draw nothing).
 */
const VISIBLE = /[^\s\p{C}\p{M}\p{Default_Ignorable_Code_Point}\u2800\u{1d159}]/u;

/**
 * The first `max` characters of `value`, counted as code points: a cut never leaves half of a
 * surrogate pair (an emoji, a rare Han character), which a page would show as U+FFFD. Only the
 * characters kept are looked at, so a long value costs no more than a short one.
 */
export function firstCharacters(value: string, max: number): string {
  let end = 0;
  let count = 0;
  for (const character of value) {
    if (count === max) break;
    end += character.length;
    count += 1;
  }
  return value.slice(0, end);
}

/** Whether `value` holds at least one character a reader sees. */
export function hasVisibleCharacter(value: string): boolean {
  return VISIBLE.test(value);
}

/**
 * Control characters stored text may not hold: PostgreSQL text cannot hold NUL at all, and the
 * others have no place in what people write. A `line` (a title, a bio) holds no tab, line break
 * or bidirectional control either; a `text` (a body, a comment) may hold tabs and line breaks; a
 * `paragraph` (an application's description, shown where people decide whether to trust it) may
 * hold them too, but no bidirectional control; a `name` holds no invisible character
 * (`INVISIBLE`) and at least one letter or digit.
 */
const TEXT_CONTROLS = '\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f';
const CONTROLS = {
  text: new RegExp(`[${TEXT_CONTROLS}]`),
  paragraph: new RegExp(`[${TEXT_CONTROLS}${BIDI_CONTROLS}]`),
  line: new RegExp(`[\\x00-\\x1f\\x7f${BIDI_CONTROLS}]`),
  name: INVISIBLE,
} as const;

export interface TextRule {
  kind: keyof typeof CONTROLS;
  max: number;
  /** 0 for a field that may be left empty; 1 otherwise. */
  min?: 0 | 1;
}

/** `value` trimmed, or an InputError for `field` when it breaks `rule`. */
export function checkedText(field: string, value: string, rule: TextRule): string {
  // Each half of a surrogate pair alone becomes U+FFFD, as UTF-8 has it and a browser form sends
  // it: PostgreSQL stored one U+FFFD for it and SQLite three, so a title from a JSON body read
  // differently on the two databases.
  const text = value.trim().toWellFormed();
  const min = rule.min ?? 1;
  if (text.length < min || text.length > rule.max) {
    throw InputError.worded(field, min === 0 ? `${field} must be at most ${rule.max} characters` : `${field} must be 1 to ${rule.max} characters`,
      { key: min === 0 ? 'problems.textTooLong' : 'problems.textLength', values: { max: rule.max } });
  }
  if (CONTROLS[rule.kind].test(text)) {
    throw InputError.worded(field, `${field} must not contain control characters${rule.kind === 'text' ? '' : rule.kind === 'paragraph' ? ' or direction overrides' : ', direction marks or invisible characters'}`,
      { key: 'problems.textControls' });
  }
  if (rule.kind === 'name' && !/[\p{L}\p{N}]/u.test(text)) throw InputError.worded(field, `${field} must contain a letter or a digit`, { key: 'problems.textLetterOrDigit' });
  // A required field that draws nothing (a zero-width space, a Hangul filler, a blank Braille
  // cell) would be an empty title or comment on every page that shows it.
  if (min === 1 && !hasVisibleCharacter(text)) throw InputError.worded(field, `${field} must have a character a reader can see`, { key: 'problems.textInvisible' });
  return text;
}

/**
 * Alphabets whose letters pass for one another's (Latin a and Cyrillic а, Greek Ρ and Latin P:
 * Unicode TS #39's usual confusables), told apart when a word mixes two of them without Latin.
 */
const LOOK_ALIKE_ALPHABETS = ['Cyrillic', 'Greek', 'Armenian', 'Cherokee', 'Georgian', 'Coptic', 'Lisu', 'Canadian_Aboriginal']
  .map((script) => new RegExp(`\\p{Script=${script}}`, 'u'));
const LATIN = /\p{Script=Latin}/u;
/**
 * A character of the scripts Chinese, Japanese and Korean are written in (ideographs, kana, Hangul,
 * Bopomofo), which mix with Latin as a matter of course ("读书App") and take no spacing from it.
 */
export const EAST_ASIAN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u;
/** Characters no one script owns (µ, ª) or that take their neighbour's (combining marks). */
const SHARED = /[\p{Script=Common}\p{Script=Inherited}]/u;

/** What may make a name pass for another, for staff who vouch for it: mixed alphabets, styled letters, the site's own name. */
export type LookAlikeSign = 'mixed_alphabets' | 'styled_letters' | 'site_name';

/** Whether one word's letters come from a script of their own beside Latin, or from two look-alike alphabets. */
function mixesAlphabets(word: string): boolean {
  const letters = [...word].filter((c) => /\p{L}/u.test(c) && !EAST_ASIAN.test(c));
  if (letters.some((c) => LATIN.test(c)) && letters.some((c) => !LATIN.test(c) && !SHARED.test(c))) return true;
  return new Set(letters.map((c) => LOOK_ALIKE_ALPHABETS.findIndex((alphabet) => alphabet.test(c))).filter((i) => i >= 0)).size > 1;
}

/**
 * The signs that `name` may pass for another name (attack88, attack90): a word whose letters mix
 * Latin with another script, or two look-alike alphabets ("Pаypal" with a Cyrillic а, "Gⵔⵔgle"; only
 * the plain space parts words here, not a hair or thin one); letters or digits in a compatibility
 * form, which NFKC folds into plain ones (full-width ＣＯＭ, bold 𝐏𝐚𝐲, circled Ⓟ, Roman numeral Ⅽ,
 * long ſ); or one of `siteNames` inside it once both are folded by NFKC and letter case and rid of
 * spaces, punctuation and symbols ("社 区官方", "C.o.m.m.u.n.i.t.y"). Nothing is refused: a sign is
 * for the person deciding.
 */
export function lookAlikeSigns(name: string, siteNames: readonly string[]): LookAlikeSign[] {
  const words = name.replace(/(?! )\p{Zs}/gu, '').split(/[^\p{L}\p{M}]+/u);
  const styled = [...name].some((c) => c.normalize('NFKC') !== c && /[\p{L}\p{N}]/u.test(c.normalize('NFKC')));
  const folded = (text: string) => text.normalize('NFKC').toLowerCase().replace(/[\p{Z}\p{P}\p{S}]/gu, '');
  return [
    ...(words.some(mixesAlphabets) ? ['mixed_alphabets' as const] : []),
    ...(styled ? ['styled_letters' as const] : []),
    ...(siteNames.some((site) => folded(site) !== '' && folded(name).includes(folded(site))) ? ['site_name' as const] : []),
  ];
}
