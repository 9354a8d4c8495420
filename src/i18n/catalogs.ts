/**
 * The site's words: ICU messages (plurals, selects, tags) in JSON catalogs, one file a namespace
 * and language, `resources/locales/<locale>/<namespace>.json`; a key is `<namespace>.<name>`.
 * Read once, compiled on first use. A message missing from a language falls back to English (the
 * catalog test keeps that from happening); one missing from English is a programming error.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';
import { DEFAULT_LOCALE, LOCALES, type Locale, type MessageValues, type Translator, listFormat } from '../core/locales.js';
import type { SiteNames } from '../core/site-name.js';

const ROOT = new URL('../../resources/locales/', import.meta.url);

export type Catalog = ReadonlyMap<string, string>;

/** Every message of `locale`, by key. */
export function readCatalog(locale: Locale): Catalog {
  const directory = new URL(`${locale}/`, ROOT);
  const messages = new Map<string, string>();
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.json')).sort()) {
    const namespace = file.slice(0, -'.json'.length);
    const entries = JSON.parse(readFileSync(new URL(file, directory), 'utf8')) as Record<string, unknown>;
    for (const [name, message] of Object.entries(entries)) {
      if (typeof message !== 'string') throw new Error(`${locale}/${file}: "${name}" is not a string`);
      messages.set(`${namespace}.${name}`, message);
    }
  }
  return messages;
}

/** The key of the site's name, which an operator's SITE_NAME replaces (`Settings.siteNames`). */
const SITE_NAME_KEY = 'common.siteName';

class CatalogTranslator implements Translator {
  /** The site's name, the operator's else the catalog's: `common.siteName`, and `{site}` in every message. */
  private readonly siteName: string;
  /** The values of a message given none: one object, not one a call. */
  private readonly siteOnly: Readonly<Record<string, string>>;

  constructor(
    readonly locale: Locale,
    private readonly catalog: Catalog,
    private readonly fallback: Catalog,
    operatorsName?: string,
    private readonly compiled = new Map<string, IntlMessageFormat>(),
  ) {
    this.siteName = operatorsName ?? String(this.format(SITE_NAME_KEY).format());
    this.siteOnly = Object.freeze({ site: this.siteName });
  }

  /** This language's words naming the site `siteName`: words, not a message, so its braces and apostrophes are text. */
  withSiteName(siteName: string): CatalogTranslator {
    return new CatalogTranslator(this.locale, this.catalog, this.fallback, siteName, this.compiled);
  }

  text(key: string, values?: MessageValues): string {
    if (key === SITE_NAME_KEY) return this.siteName;
    const formatted = this.format(key).format(this.filled(values) as Record<string, string | number>);
    return Array.isArray(formatted) ? formatted.join('') : String(formatted);
  }

  parts<T extends object>(key: string, values: MessageValues<T>): Array<string | T> {
    const formatted = this.format(key).format<T>(this.filled(values) as never);
    return (Array.isArray(formatted) ? formatted : [formatted]).flat() as Array<string | T>;
  }

  /**
   * `values` as a message takes them: the site's name as `site`, a value and never a message, so
   * ICU syntax in it is text; each list written as this language writes one.
   */
  private filled(values: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> {
    if (values === undefined) return this.siteOnly;
    if (!Object.values(values).some((v) => Array.isArray(v))) return { ...values, site: this.siteName };
    const list = listFormat(this.locale);
    return { ...Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Array.isArray(v) ? list.format(v as readonly string[]) : v])), site: this.siteName };
  }

  private format(key: string): IntlMessageFormat {
    let format = this.compiled.get(key);
    if (format === undefined) {
      const message = this.catalog.get(key) ?? this.fallback.get(key);
      if (message === undefined) throw new Error(`no message "${key}" in the catalogs`);
      // Messages hold no markup but ICU tags; apostrophes are text, as translators write them.
      format = new IntlMessageFormat(message, this.locale, undefined, { ignoreTag: false });
      this.compiled.set(key, format);
    }
    return format;
  }
}

let translators: ReadonlyMap<Locale, CatalogTranslator> | undefined;
/** Translators of a site's own name, by language and name (a process serves one site; tests, a few). */
const named = new Map<string, Translator>();

/** The translator of `locale`, naming the site `siteName` when given; the catalogs are read on the first call. */
export function translator(locale: Locale, siteName?: string): Translator {
  if (translators === undefined) {
    const english = readCatalog(DEFAULT_LOCALE);
    translators = new Map(LOCALES.map((l) => [l, new CatalogTranslator(l, l === DEFAULT_LOCALE ? english : readCatalog(l), english)]));
  }
  const catalogs = translators.get(locale)!;
  if (siteName === undefined) return catalogs;
  const key = `${locale}\n${siteName}`;
  let found = named.get(key);
  if (found === undefined) named.set(key, (found = catalogs.withSiteName(siteName)));
  return found;
}

/** The translators of a site named `siteNames` (SITE_NAME), by language. */
export function siteTranslator(siteNames: SiteNames): (locale: Locale) => Translator {
  return (locale) => translator(locale, siteNames[locale]);
}
