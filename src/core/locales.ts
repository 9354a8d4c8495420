/**
 * The site's languages and how a page's is chosen (INTERFACE section 12). Pure rules: the HTTP
 * layer hands in what the request carried, the catalogs (`src/i18n/`) hold the words.
 */

export const LOCALES = ['en', 'zh-CN', 'zh-TW'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** What a language picker shows for each: the name in its own language. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = { en: 'English', 'zh-CN': '简体中文', 'zh-TW': '繁體中文' };

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** Chinese as BCP 47 names it: the macrolanguage, Mandarin, and Cantonese (`yue`, or `zh-yue` with the extended subtag). */
const CHINESE_LANGUAGES = new Set(['zh', 'cmn', 'yue']);

/**
 * The supported language a BCP 47 tag asks for, or `undefined`. Chinese is told apart by script
 * first, then by region: Traditional is written in Taiwan, Hong Kong and Macao, Simplified in
 * mainland China and Singapore, and a bare `zh` most often means Simplified. Cantonese with no
 * script or region is read in Traditional, as Hong Kong and Macao write it (CLDR's likely
 * subtags: `yue` → `yue-Hant-HK`, `yue-CN` → `yue-Hans-CN`).
 */
export function localeOfTag(tag: string): Locale | undefined {
  const parts = tag.trim().toLowerCase().split(/[-_]/);
  // A singleton (`x-`, `u-`, `t-`…) begins extensions and private use: what follows is no region or script.
  const singleton = parts.findIndex((part, i) => i > 0 && part.length === 1);
  const [language = '', ...rest] = singleton < 0 ? parts : parts.slice(0, singleton);
  if (language === 'en') return 'en';
  if (!CHINESE_LANGUAGES.has(language)) return undefined;
  if (rest.includes('hant')) return 'zh-TW';
  if (rest.includes('hans')) return 'zh-CN';
  if (rest.some((part) => part === 'tw' || part === 'hk' || part === 'mo')) return 'zh-TW';
  if (rest.some((part) => part === 'cn' || part === 'sg')) return 'zh-CN';
  return language === 'yue' || rest[0] === 'yue' ? 'zh-TW' : 'zh-CN';
}

/** OpenID Connect Core 3.1.2.1 `ui_locales`: space-separated tags in order of preference; the first supported wins. */
export function localeOfUiLocales(uiLocales: string | undefined): Locale | undefined {
  if (uiLocales === undefined) return undefined;
  for (const tag of uiLocales.split(' ').slice(0, 20)) {
    const locale = tag === '' ? undefined : localeOfTag(tag);
    if (locale) return locale;
  }
  return undefined;
}

/** RFC 9110 12.4.2: `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, after `q=`. */
const WEIGHT = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * RFC 9110 12.5.4 `Accept-Language`: the supported language of the highest q-value (the first
 * listed among equals); `q=0` refuses a language, and a range whose weight is not a qvalue
 * (`q=0x1`, `q=1e0`, `q=abc`, `q =0`) is passed over rather than read as a number or as no weight.
 */
export function localeOfAcceptLanguage(header: string | undefined): Locale | undefined {
  if (header === undefined) return undefined;
  let best: { locale: Locale; q: number } | undefined;
  for (const range of header.split(',').slice(0, 50)) {
    const [tag = '', ...params] = range.split(';');
    // A parameter named q, however it is written (`q =0` too), is the weight: it must be a qvalue.
    const qParam = params.map((p) => p.trim()).find((p) => /^q\s*(?:=|$)/i.test(p));
    const weight = qParam === undefined ? undefined : WEIGHT.exec(qParam);
    if (weight === null) continue;
    const q = weight === undefined ? 1 : Number(weight[1]);
    if (q === 0) continue;
    const locale = localeOfTag(tag);
    if (locale && (best === undefined || q > best.q)) best = { locale, q };
  }
  return best?.locale;
}

export interface LanguageSignals {
  /** `ui_locales` of the authorization request the page belongs to. */
  readonly uiLocales?: string | undefined;
  /** The signed-in member's saved language. */
  readonly saved?: string | null | undefined;
  /** The `lang` cookie a picker set. */
  readonly cookie?: string | undefined;
  readonly acceptLanguage?: string | undefined;
}

/** INTERFACE section 12: the first of the app's `ui_locales`, the member's choice, the picker's, the browser's, English. */
export function chooseLocale(signals: LanguageSignals): Locale {
  return localeOfUiLocales(signals.uiLocales)
    ?? (isLocale(signals.saved) ? signals.saved : undefined)
    ?? (isLocale(signals.cookie) ? signals.cookie : undefined)
    ?? localeOfAcceptLanguage(signals.acceptLanguage)
    ?? DEFAULT_LOCALE;
}

/**
 * Values a message is filled with; a list is written as the page's language writes one
 * (`listFormat`); a function wraps the text between a tag's `<x>` and `</x>`. Never `site`: the
 * translator gives every message the site's name itself.
 */
export type MessageValues<T = never> = Record<string, string | number | readonly string[] | T | ((chunks: Array<string | T>) => T)> & { readonly site?: never };

const LIST_FORMATS = new Map<Locale, Intl.ListFormat>();

/**
 * How `locale` writes a list of things a person reads: "GET, HEAD, and POST", "GET、HEAD和POST".
 * Never for a header or a developer's error_description, which stay English (INTERFACE).
 */
export function listFormat(locale: Locale): Intl.ListFormat {
  let format = LIST_FORMATS.get(locale);
  if (format === undefined) {
    format = new Intl.ListFormat(locale, { type: 'conjunction' });
    LIST_FORMATS.set(locale, format);
  }
  return format;
}

/** The words of one language, from the catalogs. */
export interface Translator {
  readonly locale: Locale;
  /** The message `key` (`namespace.name`) as plain text; its `{site}` is the site's name, which the translator gives. */
  text(key: string, values?: MessageValues): string;
  /** The message as parts, for markup: the strings are text still to escape, the rest as the values gave them. */
  parts<T extends object>(key: string, values: MessageValues<T>): Array<string | T>;
}
