/**
 * Nicknames (INTERFACE section 12; the seed's profile "Nickname"): the name the site shows, in
 * any script. The username stays the ASCII handle that tells two members apart.
 */
import { InputError } from '../errors.js';
import type { User } from './ports.js';

export const NICKNAME_MAX_LENGTH = 30;

/**
 * Letters, marks, digits, space separators and punctuation of any script. Everything else is
 * refused: control and format characters (bidi overrides that reverse a name on the page,
 * zero-width joiners that hide a difference), unassigned code points, symbols and emoji.
 */
const NICKNAME_CHARACTERS = /^[\p{L}\p{M}\p{N}\p{P}\p{Zs}]+$/u;

/**
 * The nickname as stored: NFC-normalised, so the same name typed on two keyboards is one name,
 * and trimmed; `null` when empty (the username stands in). Counts characters, not UTF-16 units:
 * 林小伟 is three.
 */
export function checkNickname(value: string): string | null {
  const nickname = value.normalize('NFC').trim();
  if (nickname === '') return null;
  const length = [...nickname].length;
  if (length > NICKNAME_MAX_LENGTH) {
    throw InputError.worded('nickname', `nickname must be 1 to ${NICKNAME_MAX_LENGTH} characters`, { key: 'problems.nicknameLength', values: { max: NICKNAME_MAX_LENGTH } });
  }
  if (!NICKNAME_CHARACTERS.test(nickname)) {
    throw InputError.worded('nickname', 'nickname may hold letters, digits, spaces and punctuation of any script, but no symbols, emoji, control or invisible characters', { key: 'problems.nicknameCharacters' });
  }
  if (!/[\p{L}\p{N}]/u.test(nickname)) {
    throw InputError.worded('nickname', 'nickname must contain a letter or a digit', { key: 'problems.nicknameLetter' });
  }
  return nickname;
}

/** Whether the page must add the username to tell this member apart: always, unless the nickname is the username. */
export function nicknameDiffers(user: Pick<User, 'username' | 'nickname'>): boolean {
  return user.nickname !== user.username;
}
