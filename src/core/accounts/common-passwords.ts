/**
 * The list of the most common passwords, shipped as data in `resources/common-passwords.txt`
 * (NIST SP 800-63B 5.1.1.2: refuse passwords from lists of commonly used ones).
 */
import { readFileSync } from 'node:fs';

let list: Set<string> | undefined;

function commonPasswords(): Set<string> {
  if (!list) {
    const text = readFileSync(new URL('../../../resources/common-passwords.txt', import.meta.url), 'utf8');
    list = new Set(text.split('\n').filter((line) => line !== '' && !line.startsWith('#')));
  }
  return list;
}

/** Whether the password is on the list, compared without letter case. */
export function isCommonPassword(password: string): boolean {
  return commonPasswords().has(password.toLowerCase());
}
