/**
 * The site's name as its operator sets it (SITE_NAME, SITE_NAME_<LANGUAGE>): pages and mail name
 * the site in the reader's language through the catalogs' `common.siteName`, which these replace.
 */
import { DEFAULT_LOCALE, LOCALES, type Locale } from './locales.js';

/** The site's name in each language an operator named it in. */
export type SiteNames = Readonly<Partial<Record<Locale, string>>>;

/** The catalogs' English name, for a site its operator did not name. */
const UNNAMED_SITE = 'Community';

/**
 * The one name a label read in every language carries: an authenticator app's entry, a passkey,
 * a mail's sender. The English name, else any name set, else the catalogs' English one.
 */
export function labelName(names: SiteNames): string {
  return names[DEFAULT_LOCALE] ?? LOCALES.map((locale) => names[locale]).find((name) => name !== undefined) ?? UNNAMED_SITE;
}

/**
 * The site's name in every language its pages speak, as the catalogs' `common.siteName` says it
 * there (the operator's SITE_NAME else the catalogs' own): what staff are warned of, and what an
 * app nobody answers for may not call itself.
 */
export function siteNamesIn(words: (locale: Locale) => { text(key: string): string }): string[] {
  return [...new Set(LOCALES.map((locale) => words(locale).text('common.siteName')))];
}
