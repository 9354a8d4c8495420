/**
 * A coarse name for a browser from its User-Agent: "Firefox on Windows", enough for a person to
 * recognise their own sessions and notice a stranger's. Hand-written on purpose: it needs a dozen
 * families, not a library's database of every device, and never the version numbers that would
 * make a User-Agent a fingerprint on the page.
 */
import type { Translator } from '../locales.js';

/** What a program that is no browser is called. */
const SCRIPT = 'a script';

/**
 * Where an event the site's staff made comes from, in a member's security log and its notice
 * mail: the operator at the command line has no browser and no address the member should see.
 */
export const SITE_STAFF = 'the site\'s staff';

const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/\bHeadlessChrome\//, 'Headless Chrome'],
  [/\b(Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
  [/^node$|\bundici\b|\bnode-fetch\b/i, SCRIPT],
];

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

function first(table: ReadonlyArray<[RegExp, string]>, userAgent: string): string | undefined {
  return table.find(([pattern]) => pattern.test(userAgent))?.[1];
}

/** "Chrome on Linux", "Safari on iOS", "Firefox", or "Unknown browser". */
export function describeUserAgent(userAgent: string | undefined): string {
  const ua = (userAgent ?? '').slice(0, 512);
  const browser = first(BROWSERS, ua);
  const system = first(SYSTEMS, ua);
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? (system ? `A browser on ${system}` : 'Unknown browser');
}

/**
 * "Chrome on Linux", as `describeUserAgent` writes it (and the log stored it), in the reader's
 * words: the browser's and system's names are names, the rest is the catalog's.
 */
export function deviceText(t: Pick<Translator, 'text'>, described: string): string {
  if (described === 'Unknown browser') return t.text('security.unknownBrowser');
  if (described === SCRIPT) return t.text('security.scriptClient');
  if (described === SITE_STAFF) return t.text('security.siteStaff');
  const onSystem = /^A browser on (.+)$/.exec(described);
  if (onSystem) return t.text('security.browserOnSystem', { system: onSystem[1]! });
  const both = /^(.+) on (.+)$/.exec(described);
  return both ? t.text('security.browserOn', { browser: both[1]!, system: both[2]! }) : described;
}
