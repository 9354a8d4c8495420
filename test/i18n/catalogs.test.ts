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
import { readCatalog } from '../../src/i18n/catalogs.js';

const catalogs = new Map(LOCALES.map((locale) => [locale, readCatalog(locale)]));
const english = catalogs.get('en')!;

/** The argument and tag names of a message, sorted: a translation must use the same. */
function argumentsOf(message: string): string[] {
  return [...new Set([...message.matchAll(/\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*[,}]/g), ...message.matchAll(/<\/?([A-Za-z][A-Za-z0-9]*)>/g)].map((m) => m[1]!))].sort();
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

/** Messages that are the same in every language: names of things, not sentences. */
const PROPER_NOUNS = new Set<string>([]);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => join(directory, name));
}

test('every message the code names is in the English catalog', () => {
  // `t.text('ns.key'`, `rich(t, 'ns.key'`, `key: 'ns.key'` (a core problem's words), `'ns.key'` passed to a helper.
  const named = /(?:\.text\(|\.parts(?:<[^>]*>)?\(|rich\([^,]+,|key: |t\()\s*'([a-z][a-z0-9-]*\.[A-Za-z0-9_.]+)'/g;
  const missing: string[] = [];
  for (const file of sourceFiles('src')) {
    for (const match of readFileSync(file, 'utf8').matchAll(named)) {
      if (!english.has(match[1]!)) missing.push(`${file}: ${match[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});
