/**
 * Nicknames (INTERFACE section 12; the seed's profile "Nickname"): the name the site shows, in
 * any script. The username stays the ASCII handle that tells two members apart.
 */
import { InputError } from '../errors.js';
import { checkMarks, unitsBeforeNormalizing } from '../text.js';
import type { User } from './ports.js';

export const NICKNAME_MAX_LENGTH = 30;
/**
 * A nickname field's `maxlength` on a page: HTML counts UTF-16 units there, and a character outside
 * the Basic Multilingual Plane (𠮷, many rarer Han characters) takes two, so a field of
 * `NICKNAME_MAX_LENGTH` cut a name of such characters short; the server counts the characters.
 */
export const NICKNAME_FIELD_MAX_UNITS = 2 * NICKNAME_MAX_LENGTH;

/**
 * Letters, marks, digits, punctuation and the two spaces names are written with (U+0020, and the
 * ideographic U+3000), of any script. Everything else is refused: control and format characters
 * (bidi overrides that reverse a name on the page, zero-width joiners that hide a difference),
 * unassigned code points, symbols and emoji, and the characters Unicode says to draw as nothing
 * (Default_Ignorable_Code_Point: the Hangul fillers, variation selectors, the combining grapheme
 * joiner), with which a name could look blank or like another.
 */
const NICKNAME_CHARACTERS = /^(?:(?!\p{DI})[\p{L}\p{M}\p{N}\p{P} \u3000])+$/u;
/** Space padding that pushes the @username beside the name out of sight. */
const REPEATED_SPACES = /[ \u3000]{2,}/u;

/** Longer is refused before NFC reads it (`unitsBeforeNormalizing`). */
const NICKNAME_MAX_UNITS = unitsBeforeNormalizing(NICKNAME_MAX_LENGTH);

function nicknameTooLong(): InputError {
  return InputError.worded('nickname', `nickname must be 1 to ${NICKNAME_MAX_LENGTH} characters`, { key: 'problems.nicknameLength', values: { max: NICKNAME_MAX_LENGTH } });
}

/**
 * The nickname as stored: NFC-normalised, so the same name typed on two keyboards is one name,
 * and trimmed; `null` when empty (the username stands in). Counts characters, not UTF-16 units:
 * 林小伟 is three.
 */
export function checkNickname(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed.length > NICKNAME_MAX_UNITS) throw nicknameTooLong();
  const nickname = trimmed.normalize('NFC').trim();
  if (nickname === '') return null;
  if ([...nickname].length > NICKNAME_MAX_LENGTH) throw nicknameTooLong();
  if (!NICKNAME_CHARACTERS.test(nickname) || REPEATED_SPACES.test(nickname)) {
    throw InputError.worded('nickname', 'nickname may hold letters, digits, punctuation and single spaces of any script, but no symbols, emoji, control or invisible characters', { key: 'problems.nicknameCharacters' });
  }
  // Marks stacked past what any script writes draw over the text around the name (`checkMarks`).
  checkMarks('nickname', nickname);
  if (!/[\p{L}\p{N}]/u.test(nickname)) {
    throw InputError.worded('nickname', 'nickname must contain a letter or a digit', { key: 'problems.nicknameLetter' });
  }
  return nickname;
}

/** Whether the page must add the username to tell this member apart: always, unless the nickname is the username. */
export function nicknameDiffers(user: Pick<User, 'username' | 'nickname'>): boolean {
  return user.nickname !== user.username;
}
