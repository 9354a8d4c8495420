/** Text people type and we store: trimmed, within its length, and free of control characters. */
import { InputError } from './errors.js';

/**
 * Control characters stored text may not hold: PostgreSQL text cannot hold NUL at all, and the
 * others have no place in what people write. A `line` (a title, a name) holds no tab or line
 * break either; a `text` (a body, a comment, a description) may.
 */
const CONTROLS = { text: /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/, line: /[\x00-\x1f\x7f]/ } as const;

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
  if (CONTROLS[rule.kind].test(text)) throw new InputError(field, `${field} must not contain control characters`);
  return text;
}
