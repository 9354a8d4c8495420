/**
 * Times as the site shows them (INTERFACE section 12): in the viewer's IANA time zone, with its
 * offset, so "11:16" is never ambiguous. The API's timestamps follow seed section 8 instead.
 */
import { LOCALES, type Locale } from './locales.js';
import type { Instant } from './time.js';
import { BoundedMemo } from './bounded-memo.js';

/** The seed's community keeps UTC+8. */
export const DEFAULT_SITE_TIME_ZONE = 'Asia/Shanghai';

/**
 * Formatters kept, per use, each made once per key (a zone, or a language and a zone): making one
 * costs far more than using it. A handful of zones are in use at once, and each formatter holds
 * about 25 KB of ICU memory outside the heap. A zone is taken in any spelling (`aSIA/shanghai`),
 * each a key of its own, so a flood of spellings would otherwise hold 25 MB a thousand (issue 35
 * item 5).
 */
const KEPT_FORMATS = 64;

const formats = new BoundedMemo<string, Intl.DateTimeFormat>(KEPT_FORMATS);

function formatIn(timeZone: string): Intl.DateTimeFormat {
  return formats.get(timeZone, () => new Intl.DateTimeFormat('en-US', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'shortOffset',
  }));
}

/** An IANA zone name this runtime knows (`Asia/Taipei`, `UTC`); nothing else is saved. */
export function isTimeZone(value: string): boolean {
  if (value.length === 0 || value.length > 64 || !/^[A-Za-z][A-Za-z0-9_+/-]*$/.test(value)) return false;
  try {
    formatIn(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The runtime's own name of a zone it takes (`asia/shanghai`, `PRC` → `Asia/Shanghai`;
 * `Asia/Kolkata` → `Asia/Calcutta`, shown as Kolkata): what is saved, so that one zone is never
 * listed twice under two spellings (attack90).
 */
export function canonicalTimeZone(timeZone: string): string {
  return formatIn(timeZone).resolvedOptions().timeZone;
}

/** The zones a member can choose from, as the runtime lists them. */
export function timeZoneNames(): readonly string[] {
  return Intl.supportedValuesOf('timeZone');
}

/**
 * The zone times are shown to a member in: the one they saved, else the site's. A saved zone this
 * runtime does not know (saved under another ICU, before a rollback or from a restored database)
 * reads as none, so that no page or mail fails on it (attack88).
 */
export function readerTimeZone(saved: string | null, siteTimeZone: string): string {
  return saved !== null && isTimeZone(saved) ? saved : siteTimeZone;
}

/**
 * IANA's current names of zones this runtime's ICU still lists under names IANA has moved to its
 * `backward` file (Asia/Calcutta has been Asia/Kolkata since 2008, Europe/Kiev Europe/Kyiv since
 * 2022): a member looks for their city as it is written now. Only what is shown changes; the value
 * saved stays the runtime's, which every Intl API takes.
 */
const CURRENT_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara', 'America/Buenos_Aires': 'America/Argentina/Buenos_Aires', 'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan', 'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk', 'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy', 'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza', 'Asia/Calcutta': 'Asia/Kolkata', 'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon', 'Asia/Saigon': 'Asia/Ho_Chi_Minh', 'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv', 'Pacific/Enderbury': 'Pacific/Kanton', 'Pacific/Ponape': 'Pacific/Pohnpei', 'Pacific/Truk': 'Pacific/Chuuk',
};

/** `Asia/Kolkata` for the runtime's `Asia/Calcutta`: a zone's IANA name as IANA writes it today. */
export function currentZoneName(timeZone: string): string {
  return CURRENT_NAMES[timeZone] ?? timeZone;
}

/** A formatter's options for the wall clock to the second, in digits `offsetOfWallClock` reads. */
const WALL_CLOCK = {
  year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', hourCycle: 'h23', numberingSystem: 'latn',
} as const satisfies Intl.DateTimeFormatOptions;

/** How far the wall clock `parts` show at `instant` is ahead of UTC, in milliseconds (to the second). */
function offsetOfWallClock(parts: readonly Intl.DateTimeFormatPart[], instant: Instant): number {
  const p = Object.fromEntries(parts.map((part) => [part.type, Number(part.value)]));
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

const genericNames = new Map<string, string | null>();
/** Each zone's offset as the time-zone list last read it, and the quarter hour (counted from 1970) it holds for. */
const listedOffsets = new Map<string, { quarter: number; offset: string }>();
const QUARTER_HOUR_MS = 900_000;

/** `UTC+8`, `UTC-3:30`, `UTC`: an offset from UTC as the site writes it (`formatSiteTime`). */
function offsetWords(offsetMs: number): string {
  if (offsetMs === 0) return 'UTC';
  const minutes = Math.abs(offsetMs) / 60_000;
  return `UTC${offsetMs < 0 ? '-' : '+'}${Math.floor(minutes / 60)}${minutes % 60 === 0 ? '' : `:${String(minutes % 60).padStart(2, '0')}`}`;
}

/**
 * What the time-zone list shows of a zone: its generic name in `locale` (`中国标准时间`, `Eastern
 * Time`; CLDR's, through ICU), for a member who looks for where they live rather than for an IANA
 * name such as `Asia/Calcutta`, none where the runtime has only an offset for it (`Etc/GMT+5`); and
 * its offset at `now` (`UTC+8`).
 *
 * Both are read from one formatter, let go at once, and kept as strings: a formatter holds about
 * 25 KB of ICU memory outside the heap, and one kept per zone (as `formatSiteTime` keeps its own)
 * would hold 10 MB for a list read on one settings page (issue 35 item 5: peak RSS). A name does
 * not change with daylight saving time and is kept; an offset is kept for its quarter hour, since
 * every clock change in the runtime's rules falls on a quarter hour of UTC (780 of them in
 * 2026–2028, all zones).
 */
export function timeZoneListing(timeZone: string, locale: Locale, now: Instant): { name: string | undefined; offset: string } {
  const key = `${locale} ${timeZone}`;
  const quarter = Math.floor(now / QUARTER_HOUR_MS);
  let name = genericNames.get(key);
  let offset = listedOffsets.get(timeZone);
  if (name === undefined || offset?.quarter !== quarter) {
    const parts = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'longGeneric', ...WALL_CLOCK }).formatToParts(now);
    // The name as of now: zones change hands (Europe/Kiev was in Moscow's zone in 1970, attack88).
    const generic = parts.find((p) => p.type === 'timeZoneName')?.value;
    name = generic === undefined || /^(GMT|UTC)([+-]|$)/.test(generic) ? null : generic;
    // Every zone in every language is about 1,300 short strings; the bound keeps it so.
    if (genericNames.size < 2000) genericNames.set(key, name);
    offset = { quarter, offset: offsetWords(offsetOfWallClock(parts, now)) };
    if (listedOffsets.size < 1000 || listedOffsets.has(timeZone)) listedOffsets.set(timeZone, offset);
  }
  return { name: name ?? undefined, offset: offset.offset };
}

/** `2026-11-24 11:16 UTC+8`: the same shape in every language, as sites in China and Taiwan write it. */
export function formatSiteTime(instant: Instant, timeZone: string): string {
  const parts = Object.fromEntries(formatIn(timeZone).formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT(\+0)?$/, 'UTC').replace(/^GMT/, 'UTC');
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}

const dayFormats = new BoundedMemo<string, Intl.DateTimeFormat>(KEPT_FORMATS);

/** The day `instant` falls on in `timeZone`, as `YYYY-MM-DD`. */
export function dayIn(instant: Instant, timeZone: string): string {
  const format = dayFormats.get(timeZone, () => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }));
  return format.format(new Date(instant));
}

/**
 * The calendar day `days` after `day` (before it when negative), both `YYYY-MM-DD`: counted in
 * whole dates, so a day 23 or 25 hours long in some zone is neither skipped nor repeated.
 */
export function calendarDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** A zone's offset from UTC lies within these bounds (UTC−12 to UTC+14), so a day starts within them of its UTC midnight. */
const EARLIEST_OFFSET_MS = -12 * 3_600_000;
const LATEST_OFFSET_MS = 14 * 3_600_000;

/**
 * The first instant of `day` (`YYYY-MM-DD`) in `timeZone`: its midnight, or where a clock change
 * skips midnight, the instant the day begins. `dayIn` of it is `day`, of the millisecond before it
 * the day before. A guess from the zone's offset at UTC midnight is right on almost every day and
 * costs three formatted dates; a day whose offset changes near its start is found by halving the
 * range its start can lie in.
 */
export function dayStartIn(day: string, timeZone: string): Instant {
  const midnightUtc = Date.parse(`${day}T00:00:00Z`);
  const startsAt = (instant: Instant) => dayIn(instant, timeZone) >= day && dayIn(instant - 1, timeZone) < day;
  const guess = midnightUtc - offsetAt(midnightUtc, timeZone);
  if (startsAt(guess)) return guess;
  // The smallest instant whose day is `day` or later.
  let low = midnightUtc - LATEST_OFFSET_MS - 1;
  let high = midnightUtc - EARLIEST_OFFSET_MS;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (dayIn(middle, timeZone) >= day) high = middle;
    else low = middle;
  }
  return high;
}

const offsetFormats = new BoundedMemo<string, Intl.DateTimeFormat>(KEPT_FORMATS);

/** How far `timeZone`'s clock is ahead of UTC at `instant`, in milliseconds (to the second). */
function offsetAt(instant: Instant, timeZone: string): number {
  const format = offsetFormats.get(timeZone, () => new Intl.DateTimeFormat('en-US', { timeZone, ...WALL_CLOCK }));
  return offsetOfWallClock(format.formatToParts(new Date(instant)), instant);
}

const dateFormats = new BoundedMemo<string, Intl.DateTimeFormat>(KEPT_FORMATS);

/**
 * The day `instant` falls on in `timeZone`, written as the language writes a date alone
 * (`2026年11月24日`, `November 24, 2026`): for what happened on a day, such as joining the site.
 */
export function formatSiteDate(instant: Instant, timeZone: string, locale: Locale): string {
  const format = dateFormats.get(`${locale} ${timeZone}`, () => new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'long' }));
  return format.format(new Date(instant));
}

/** The instant for a `<time datetime>` attribute: UTC, to the second. */
export function machineTime(instant: Instant): string {
  return new Date(Math.floor(instant / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * One formatter a language, made once: a settings page shows dozens of times. Counted always
 * ("1 day ago", "1天前"), never "yesterday" or "last month": the count is of elapsed time, and 37
 * hours ago can be two days back on the calendar shown beside it.
 */
const relativeFormats: Readonly<Record<Locale, Intl.RelativeTimeFormat>> = Object.fromEntries(
  LOCALES.map((locale) => [locale, new Intl.RelativeTimeFormat(locale, { numeric: 'always' })]),
) as Record<Locale, Intl.RelativeTimeFormat>;

/** "Just now" as each language's sites write it; Intl's 现在 / 現在 reads as "at present". */
const JUST_NOW: Readonly<Record<Locale, string>> = { en: 'now', 'zh-CN': '刚刚', 'zh-TW': '剛剛' };

const UNITS: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [['year', 365 * 86_400], ['month', 30 * 86_400], ['day', 86_400], ['hour', 3600], ['minute', 60]];

/** "3 minutes ago", "3 分钟前", "in 2 days": for times within a month or so of now; `undefined` otherwise. */
export function relativeTime(instant: Instant, now: Instant, locale: Locale): string | undefined {
  const seconds = Math.round((instant - now) / 1000);
  const absolute = Math.abs(seconds);
  if (absolute > 45 * 86_400) return undefined;
  if (absolute < 60) return JUST_NOW[locale];
  const [unit, size] = UNITS.find(([, s]) => absolute >= s)!;
  return relativeFormats[locale].format(Math.trunc(seconds / size), unit);
}
