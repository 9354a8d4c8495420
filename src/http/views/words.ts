/**
 * The catalogs' words in templates: plain messages, messages with markup, problems of a form, and
 * the two things every page names the same way, a time and a person.
 */
import { nicknameDiffers } from '../../core/accounts/nicknames.js';
import type { User } from '../../core/accounts/ports.js';
import type { PersonalTokenStatus } from '../../core/credentials/personal-tokens.js';
import type { FieldProblem } from '../../core/errors.js';
import { type MessageValues, type Translator, listFormat } from '../../core/locales.js';
import { homepageAsRead } from '../../core/oauth/clients.js';
import { SCOPES, type Scope } from '../../core/oauth/scopes.js';
import { EAST_ASIAN, isolated, needsIsolation } from '../../core/text.js';
import { formatSiteDate, formatSiteTime, machineTime, relativeTime } from '../../core/site-time.js';
import type { Instant } from '../../core/time.js';
import { type Html, html } from './html.js';

/** What a template needs to speak the reader's language and clock. */
export interface Reader {
  t: Translator;
  /** The IANA zone times are shown in. */
  timeZone: string;
  /** The instant the page is made, for "3 minutes ago". */
  now: Instant;
}

/**
 * A message with tags (`Read <a>the guide</a>`): each tag is given as a function of its content,
 * which it wraps in markup. The message's text and every string value are escaped.
 */
export function rich(t: Translator, key: string, values: MessageValues<Html>): Html {
  return html`${t.parts<Html>(key, values)}`;
}

/** A letter or digit that is not an ideograph, kana, Hangul or Bopomofo: CSS Text 4's "non-ideographic letters and numerals". */
const nonIdeographic = (character: string) => /^[\p{L}\p{N}]$/u.test(character) && !EAST_ASIAN.test(character);

/**
 * An app's name in bold where a message sets it (`允许<b>{app}</b>使用你的账号？`): a box of its own
 * (`nameBox`).
 */
export function appName(chunks: Array<string | Html>): Html {
  return nameBox('strong', chunks);
}

/** An app's name in a sentence of the consent page, in the words' own weight: a box of its own (`nameBox`). */
export function appNameInSentence(name: string): Html {
  return nameBox('span', [name]);
}

/**
 * An app's name as a box of its own (class `app-name`), which the stylesheet keeps from drawing
 * over the words and buttons around it (marks stacked on its letters in a name saved before they
 * were bounded, a run of letters with no place to break). Chinese puts a narrow space between Han
 * characters and a Latin word (W3C clreq 3.2.2), which `text-autospace` does not set beside a box,
 * so a Latin first or last character is marked (`latin-start`, `latin-end`) for the stylesheet's
 * margin. A Chinese name gets no mark.
 */
function nameBox(element: 'strong' | 'span', chunks: Array<string | Html>): Html {
  const text = chunks.join('');
  const { start, end } = latinEdges(text);
  const name = needsIsolation(text) ? html`<bdi>${chunks}</bdi>` : chunks;
  const classes = `app-name${start ? ' latin-start' : ''}${end ? ' latin-end' : ''}`;
  return element === 'strong' ? html`<strong class="${classes}">${name}</strong>` : html`<span class="${classes}">${name}</span>`;
}

/**
 * A name someone chose (an app's, a token's) in a sentence of markup: isolated (`<bdi>`, UAX #9
 * isolates) when it could reorder the words around it, that is when it holds a right-to-left
 * letter or a direction control a rule of today refuses and an older row may still hold (an
 * isolate ends whatever embedding or override it opened); every other name is left bare, as the
 * site's languages are all written left to right and such a name reorders nothing.
 */
export function chosenName(name: string): Html | string {
  return needsIsolation(name) ? html`<bdi>${name}</bdi>` : name;
}

/** Whether `text` starts, and whether it ends, with a non-ideographic letter or digit. */
function latinEdges(text: string): { start: boolean; end: boolean } {
  return { start: nonIdeographic([...text].at(0) ?? ''), end: nonIdeographic([...text].at(-1) ?? '') };
}

/**
 * An app's name in a page's `<title>`, which no stylesheet reaches: in Chinese, a Latin edge gets a
 * plain space, as Chinese sites write mixed text by hand ("允许 Demo App 访问？"); a Chinese name,
 * and every name in English, as it is.
 */
export function appNameInTitle(t: Translator, name: string): string {
  if (!t.locale.startsWith('zh')) return isolated(name);
  const { start, end } = latinEdges(name);
  return `${start ? ' ' : ''}${isolated(name)}${end ? ' ' : ''}`;
}

/**
 * A link to an app's homepage, which shows the address it goes to: as the browser reads it
 * (`homepageAsRead`), so a homepage saved in look-alike letters shows where it leads (attack127).
 */
export function homepageLink(homepageUrl: string): Html {
  const homepage = homepageAsRead(homepageUrl);
  return html`<a href="${homepage}" rel="noopener noreferrer">${homepage}</a>`;
}

/** "email and phone", "email和phone": a list in the page's language, each item as markup. */
export function listOf(t: Translator, items: readonly Html[]): Html {
  const parts = listFormat(t.locale).formatToParts(items.map((_, i) => String(i)));
  return html`${parts.map((part) => (part.type === 'element' ? items[Number(part.value)]! : part.value))}`;
}

/** A form's problem in the reader's language; English only where the core has no words for it yet. */
export function problemText(t: Translator, problem: Pick<FieldProblem, 'message' | 'words'>): string {
  return problem.words ? t.text(problem.words.key, problem.words.values) : problem.message;
}

/**
 * A time in the reader's zone with its offset (`2026-11-24 11:16 UTC+8`), carrying the UTC instant
 * for machines; `relative` puts "3 minutes ago" in the page's language before it when it is recent.
 * The full time is always shown, never only in a title (INTERFACE section 12: every time a page
 * shows carries its offset; a phone has no hover).
 */
export function timeOf(reader: Reader, instant: Instant, options: { relative?: boolean } = {}): Html {
  const time = timeElement(instant, formatSiteTime(instant, reader.timeZone));
  const ago = options.relative ? relativeTime(instant, reader.now, reader.t.locale) : undefined;
  // The brackets around the time go with it (`when`): Chromium breaks before a box of its own even
  // after "（", and Chinese never ends a line with an opening bracket (W3C clreq 3.1.7).
  return ago === undefined ? time : rich(reader.t, 'common.recentTime', { ago, time, when: (chunks) => html`<span class="when">${chunks}</span>` });
}

/**
 * A day in the reader's zone, as their language writes a date alone, carrying the UTC instant for
 * machines as every time of the site does (INTERFACE section 12): the day alone would be the
 * reader's, in a zone the attribute does not name.
 */
export function dateOf(reader: Reader, instant: Instant): Html {
  return timeElement(instant, formatSiteDate(instant, reader.timeZone, reader.t.locale));
}

/** `shown` in a `<time>` whose `datetime` is the UTC instant (`…Z`). */
function timeElement(instant: Instant, shown: string): Html {
  return html`<time datetime="${machineTime(instant)}">${shown}</time>`;
}

/**
 * A member as every page names them: the nickname, and the username beside it whenever they
 * differ, so two members whose nicknames look alike are told apart (INTERFACE section 12). The
 * nickname is isolated (`<bdi>`): a right-to-left name never reorders the @username beside it.
 * A username alone is marked as one (`username`), not as a nickname: the header keeps it one word,
 * as it keeps the @handle.
 */
export function personName(user: Pick<User, 'username' | 'nickname'>): Html {
  return nicknameDiffers(user)
    ? html`<bdi class="nickname">${user.nickname}</bdi> <span class="handle">@${user.username}</span>`
    : html`<span class="username">${user.username}</span>`;
}



/**
 * Where public/webauthn.js says how a passkey ceremony goes: the script only writes, so its words
 * come from the page, in the page's language.
 */
export function passkeyStatus(t: Translator): Html {
  return html`<p class="hint" role="status" data-webauthn-status data-waiting="${t.text('common.passkeyWaiting')}" data-checking="${t.text('common.passkeyChecking')}" data-failed="${t.text('common.passkeyFailed')}" data-expired="${t.text('common.passkeyExpired')}" data-reload="${t.text('common.passkeyReload')}"></p>`;
}

/**
 * What a scope lets an app or a token read, and what not ("Not: …"), in the reader's language: one
 * set of words for the consent page, the authorized apps and the personal-token form, so that a
 * member reads the same promise wherever the scope is named.
 */
export function scopeWords(t: Translator, scope: Scope): { title: string; allows: string; notAllowed: string } {
  const { words } = SCOPES[scope];
  return { title: t.text(words.title.key), allows: t.text(words.allows.key), notAllowed: t.text('scopes.notAllowed', { what: t.text(words.doesNotAllow.key) }) };
}

/** A personal token's state (`personalTokenStatus`) in one set of words for the member's tokens page and the staff console. */
export function tokenStatusWords(t: Translator, status: PersonalTokenStatus): string {
  switch (status) {
    case 'revoked': return t.text('tokens.statusRevoked');
    case 'expired': return t.text('tokens.statusExpired');
    case 'active': return t.text('tokens.statusActive');
  }
}

/** The address a session began from, or "unknown" for one kept without it (begun before sessions kept their address: the column's default is empty). */
export function sessionAddress(t: Translator, address: string): string {
  return address || t.text('security.unknownAddress');
}

export { isolated };
