/** Text people type and we store: trimmed, within its length, and free of control characters. */
import { InputError } from './errors.js';

/**
 * Bidirectional embeddings, overrides and isolates reorder what a reader sees ("Trojan Source",
 * CVE-2021-42574): no stored line holds them.
 */
const BIDI_CONTROLS = '\u202a-\u202e\u2066-\u2069';
/**
 * Marks and fillers that show nothing, so two names that look the same can differ: a `name` (an
 * application's or a category's, shown to people deciding whom to trust) holds none of them.
 */
const INVISIBLES = '\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2060-\u2064\u3164\ufeff\uffa0';
/**
 * Control characters stored text may not hold: PostgreSQL text cannot hold NUL at all, and the
 * others have no place in what people write. A `line` (a title, a bio) holds no tab, line break
 * or bidirectional control either; a `text` (a body, a comment, a description) may hold tabs and
 * line breaks; a `name` is a line without invisible characters.
 */
const CONTROLS = {
  text: /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/,
  line: new RegExp(`[\\x00-\\x1f\\x7f${BIDI_CONTROLS}]`),
  name: new RegExp(`[\\x00-\\x1f\\x7f${BIDI_CONTROLS}${INVISIBLES}]`),
} as const;

export interface TextRule {
  kind: keyof typeof CONTROLS;
  max: number;
  /** 0 for a field that may be left empty; 1 otherwise. */
  min?: 0 | 1;
}

/** `value` trimmed, or an InputError for `field` when it breaks `rule`. */
export function checkedText(field: string, value: string, rule: TextRule): string {
  const text = value.trim();
  const min = rule.min ?? 1;
  if (text.length < min || text.length > rule.max) {
    throw new InputError(field, min === 0 ? `${field} must be at most ${rule.max} characters` : `${field} must be 1 to ${rule.max} characters`);
  }
  if (CONTROLS[rule.kind].test(text)) {
    throw new InputError(field, `${field} must not contain control characters${rule.kind === 'text' ? '' : ', direction marks or invisible characters'}`);
  }
  return text;
}
