/**
 * The catalogs (resources/locales): every message in every language, with the same arguments, in
 * valid ICU syntax; and every message the code names exists.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { LOCALES } from '../../src/core/locales.js';
import { USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH, checkUsername } from '../../src/core/accounts/accounts.js';
import type { InputError } from '../../src/core/errors.js';
import { readCatalog, translator } from '../../src/i18n/catalogs.js';

const catalogs = new Map(LOCALES.map((locale) => [locale, readCatalog(locale)]));
const english = catalogs.get('en')!;

/** An element of a parsed message: arguments and tags have a `value` (their name); selects, plurals and tags hold more. */
interface Element {
  type: number;
  value?: unknown;
  options?: Record<string, { value: Element[] }>;
  children?: Element[];
}

/** Literal text (type 0) and `#` in a plural (type 7) name nothing. */
const NAMELESS = new Set([0, 7]);

/**
 * The argument and tag names of a message, sorted: a translation must use the same. Read from the
 * parsed message, so a select's one-word branch (`active {Active}`) is text, not an argument.
 */
function argumentsOf(message: string): string[] {
  const names = new Set<string>();
  const visit = (elements: readonly Element[]): void => {
    for (const element of elements) {
      if (!NAMELESS.has(element.type) && typeof element.value === 'string') names.add(element.value);
      for (const option of Object.values(element.options ?? {})) visit(option.value);
      visit(element.children ?? []);
    }
  };
  visit(new IntlMessageFormat(message, 'en', undefined, { ignoreTag: false }).getAst() as unknown as Element[]);
  return [...names].sort();
}

test('every message exists in every language, and no language has one English lacks', () => {
  for (const [locale, catalog] of catalogs) {
    const missing = [...english.keys()].filter((key) => !catalog.has(key));
    const extra = [...catalog.keys()].filter((key) => !english.has(key));
    assert.deepEqual({ locale, missing, extra }, { locale, missing: [], extra: [] });
  }
});

test('every message is valid ICU and a translation uses the same arguments and tags as English', () => {
  for (const [locale, catalog] of catalogs) {
    for (const [key, message] of catalog) {
      assert.doesNotThrow(() => new IntlMessageFormat(message, locale), `${locale} ${key}`);
      assert.deepEqual(argumentsOf(message), argumentsOf(english.get(key) ?? ''), `${locale} ${key}`);
    }
  }
});

test('a Chinese message is Chinese: none is left as the English text', () => {
  for (const locale of ['zh-CN', 'zh-TW'] as const) {
    const untranslated = [...catalogs.get(locale)!].filter(([key, message]) => /[A-Za-z]{3,}/.test(message.replace(/\{[^}]*\}|<\/?[A-Za-z]+>/g, '')) && message === english.get(key));
    assert.deepEqual(untranslated.map(([key]) => key).filter((key) => !PROPER_NOUNS.has(key)), [], locale);
  }
});

test('a message that sends the reader to a settings page ("Settings → …") names it as the settings menu does', () => {
  for (const [locale, catalog] of catalogs) {
    const menu = [...catalog].filter(([key]) => key.startsWith('settings.nav')).map(([, label]) => label);
    const settings = catalog.get('common.settings')!;
    for (const [key, message] of catalog) {
      for (const [, named] of message.matchAll(new RegExp(`${settings} → ([^.”」]+)`, 'g'))) {
        assert.ok(menu.includes(named!), `${locale} ${key}: "${named}" is no settings page; the menu has ${menu.join(', ')}`);
      }
    }
  }
});

/** Messages that are the same in every language: names of things, not sentences. */
const PROPER_NOUNS = new Set<string>([]);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => join(directory, name));
}

test('every message the code names is in the English catalog', () => {
  // `t.text('ns.key'`, `rich(t, 'ns.key'`, `key: 'ns.key'` (a core problem's words), `t('ns.key'` (a
  // helper named t; not the end of another name: Kysely's `select('users.id'` names a column).
  const named = /(?:\.text\(|\.parts(?:<[^>]*>)?\(|rich\([^,]+,|key: |\bt\()\s*'([a-z][a-z0-9-]*\.[A-Za-z0-9_.]+)'/g;
  const missing: string[] = [];
  for (const file of sourceFiles('src')) {
    for (const match of readFileSync(file, 'utf8').matchAll(named)) {
      if (!english.has(match[1]!)) missing.push(`${file}: ${match[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('the username bounds in the sign-up hint and the shape problem are the constants\' (ICU arguments): a changed constant changes every page, in every language', () => {
  const problem = (() => { try { checkUsername('a'); } catch (error) { return (error as InputError).problems[0]?.words; } return undefined; })();
  assert.deepEqual(problem, { key: 'problems.usernameShape', values: { min: USERNAME_MIN_LENGTH, max: USERNAME_MAX_LENGTH } }, 'the problem carries the bounds');
  for (const locale of LOCALES) {
    const t = translator(locale);
    for (const key of ['sign-up.usernameHint', 'problems.usernameShape']) {
      // Bounds no catalog holds as text: only arguments can put them there.
      const said = t.text(key, { min: 7, max: 43 });
      assert.ok(said.includes('7') && said.includes('43') && !said.includes('30'), `${locale} ${key}: ${said}`);
    }
  }
});
