/**
 * Settings pages: profile (nickname, bio, language, time zone, avatar, data download, deletion), API tokens,
 * authorized applications, developer applications. Every word is the catalogs' (`settings`,
 * `tokens`, `apps`), every time the reader's (`timeOf`).
 */
import { documentHost } from '../../core/oauth/client-metadata.js';
import { EMAIL_SETTINGS_PATH, PROFILE_SETTINGS_PATH } from '../../core/urls.js';
import type { AuthorizedApplication } from '../../core/oauth/applications.js';
import { AVATAR_MAX_BYTES } from '../../core/community/avatars.js';
import { DEFAULT_PERSONAL_TOKEN_DAYS, MAX_PERSONAL_TOKENS, PERSONAL_TOKENS_PER_DAY, PERSONAL_TOKEN_LIFETIMES, personalTokenStatus } from '../../core/credentials/personal-tokens.js';
import type { User } from '../../core/accounts/ports.js';
import type { PersonalToken } from '../../core/credentials/ports.js';
import { APP_REGISTRATIONS_PER_DAY, MAX_APPS_PER_OWNER, homepageAsRead, livePreviousSecret } from '../../core/oauth/clients.js';
import type { Client } from '../../core/oauth/ports.js';
import { RESOURCE_SCOPES, SCOPES, type Scope, scopeList } from '../../core/oauth/scopes.js';
import type { Words } from '../../core/errors.js';
import { LOCALES, LOCALE_NAMES, type Translator } from '../../core/locales.js';
import { currentZoneName, isTimeZone, timeZoneListing, timeZoneNames } from '../../core/site-time.js';
import type { Instant } from '../../core/time.js';
import { avatarSrc } from './community.js';
import { type Html, html } from './html.js';
import { type FormError, type FormErrors, type ProblemWords, control, errorSummary, errorsFor, fieldMessage, invalid, sentences, spaceBetween } from './forms.js';
import { type PageContext, layout } from './layout.js';
import { stackedTable } from './stacked-table.js';
import { BIO_MAX_LENGTH } from '../../core/accounts/accounts.js';
import { NICKNAME_FIELD_MAX_UNITS, NICKNAME_MAX_LENGTH } from '../../core/accounts/nicknames.js';
import { type Reader, chosenName, homepageLink, isolated, rich, scopeWords, timeOf, tokenStatusWords } from './words.js';

export type SettingsSection = '/settings/profile' | '/settings/tokens' | '/settings/applications' | '/settings/developers' | '/settings/security' | '/settings/email';

function sections(t: Translator): ReadonlyArray<{ path: SettingsSection; label: string }> {
  return [
    { path: PROFILE_SETTINGS_PATH, label: t.text('settings.navProfile') },
    { path: '/settings/tokens', label: t.text('settings.navTokens') },
    { path: '/settings/applications', label: t.text('settings.navApplications') },
    { path: '/settings/developers', label: t.text('settings.navDevelopers') },
    { path: '/settings/security', label: t.text('settings.navSecurity') },
    { path: EMAIL_SETTINGS_PATH, label: t.text('recovery.emailNav') },
  ];
}

export { type FormError, type FormErrors, sentence } from './forms.js';

/** The summary of a form's problems (`errorSummary`) in the reader's language, fields named by `labels`. */
export function alert(t: Translator, errors: FormErrors, labels?: Readonly<Record<string, string>>): Html | '' {
  return errorSummary(errors, { t, ...(labels ? { labels } : {}) });
}

/** A notice after a change (post/redirect/get): the route names it by its words, the page says them. */
export function notice(t: Translator, words: Words | undefined): Html | string {
  return words ? html`<p class="notice" role="status">${t.text(words.key, words.values)}</p>` : '';
}

/** A time on a settings page: the reader's zone with its offset, "3 minutes ago" beside it when recent; "never" for none. */
export function at(reader: Reader, instant: Instant | null): Html {
  return instant === null ? html`<span class="muted">${reader.t.text('settings.never')}</span>` : timeOf(reader, instant, { relative: true });
}

export function settingsLayout(title: string, context: PageContext, current: SettingsSection, main: Html, options: { script?: 'webauthn' | 'copy' | undefined } = {}): Html {
  return layout(title, context, html`<div class="settings">
<nav class="settings-nav" aria-label="${context.t.text('common.settings')}">
  <ul>${sections(context.t).map((s) => html`<li><a href="${s.path}" ${s.path === current ? html`aria-current="page"` : ''}>${s.label}</a></li>`)}</ul>
</nav>
<div class="settings-main">${main}</div>
</div>`, options);
}

/**
 * A secret shown once, in a read-only field: selectable and copyable without any script. The
 * page's `copy` script (public/copy.js) shows the Copy button, hidden without it.
 */
export function shownOnce(t: Translator, id: string, label: string, value: string): Html {
  return html`<div class="secret">
  <label for="${id}">${label}</label>
  <div class="copy-row">
    <input type="text" id="${id}" class="mono" value="${value}" readonly autocomplete="off" spellcheck="false" aria-describedby="${id}-hint">
    ${copyButton(t, id)}
  </div>
  <p class="hint" id="${id}-hint" data-copied="${t.text('settings.copiedOnce')}">${t.text('settings.copyNow')}</p>
</div>`;
}

/** The Copy button of public/copy.js, which shows it and says, in the page's words, how it went. */
export function copyButton(t: Translator, id: string): Html {
  return html`<button type="button" class="secondary" data-copy="${id}" data-copied-label="${t.text('settings.copied')}" data-copy-failed="${t.text('settings.copyFailed')}" hidden>${t.text('settings.copy')}</button>`;
}

/**
 * A destructive action asked first (issue 18 item 7): what will happen, and a form that repeats
 * the request with `confirm=yes`. Only that second POST acts; the first changed nothing.
 */
export interface Confirmation {
  section: SettingsSection;
  title: string;
  /** What will happen, in words. */
  consequences: Html;
  action: string;
  /** The request's own fields, sent again as hidden fields. */
  fields: Record<string, string>;
  button: string;
  /** Where "Cancel" goes: the page the request came from. */
  cancel: string;
  /** Fields the confirmation itself asks for (the password before deleting the account). */
  inputs?: Html;
  error?: FormError | undefined;
}

export function confirmationPage(context: PageContext, c: Confirmation): Html {
  return settingsLayout(c.title, context, c.section, html`<section class="card confirm" aria-labelledby="confirm-heading">
<h1 id="confirm-heading">${c.title}</h1>
${alert(context.t, c.error)}
${c.consequences}
<form method="post" action="${c.action}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${Object.entries(c.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <input type="hidden" name="confirm" value="yes">
  ${c.inputs ?? ''}
  <div class="actions"><button type="submit" class="danger">${c.button}</button> <a href="${c.cancel}" class="button secondary">${context.t.text('settings.cancel')}</a></div>
</form>
</section>`);
}


function scopeItems(t: Translator, scopes: readonly string[]): Html {
  return html`<ul class="scopes">${scopes.map((s) => html`<li><code>${s}</code>${Object.hasOwn(SCOPES, s) ? html` — ${scopeWords(t, s as Scope).allows}` : ''}</li>`)}</ul>`;
}

// ---- Profile -------------------------------------------------------------------------------

/** The profile form as sent, shown again with its problems. */
export interface ProfileForm {
  nickname: string;
  bio: string;
  language: string;
  timeZone: string;
}

export interface ProfilePageState {
  errors?: FormErrors;
  notice?: Words | undefined;
  form?: ProfileForm | undefined;
  /** The zone of a member who chose none (`SITE_TIME_ZONE`). */
  siteTimeZone: string;
  /** Two-step verification is on: a code may stand for the password (downloading the data). */
  twoStep: boolean;
}

/** The zones this community lives in first, then every zone the runtime knows. */
const COMMON_TIME_ZONES = ['Asia/Shanghai', 'Asia/Taipei', 'Asia/Hong_Kong', 'Asia/Singapore'] as const;

/**
 * `中国标准时间（UTC+8）· Asia/Shanghai`: the zone's name in the reader's language where ICU has one,
 * its offset now and its IANA name, in that order, so that a select cut short on a phone still shows
 * the offset. A zone ICU names only by its offset (`UTC`, `Etc/GMT+5`) has the offset where the name
 * stands (`UTC-5 · Etc/GMT+5`), and `UTC`, whose IANA name is its offset, is that word alone: it
 * read `UTC（UTC）`.
 */
function timeZoneLabel(reader: Reader, zone: string): string {
  const { name, offset } = timeZoneListing(zone, reader.t.locale, reader.now);
  const place = { zone: currentZoneName(zone).replaceAll('_', ' '), offset };
  if (name !== undefined) return reader.t.text('settings.timeZoneNamed', { ...place, name });
  return place.zone === place.offset ? place.offset : reader.t.text('settings.timeZoneUnnamed', place);
}

function timeZoneOptions(reader: Reader, chosen: string): Html {
  const option = (zone: string) => html`<option value="${zone}"${zone === chosen ? html` selected` : ''}>${timeZoneLabel(reader, zone)}</option>`;
  // A zone the runtime takes but does not list (`UTC`, `Etc/GMT+5`) is shown when chosen, so that
  // saving the form again keeps it rather than the site's zone; a refused one is only in the form.
  const listed = timeZoneNames();
  const common = [...COMMON_TIME_ZONES, ...(isTimeZone(chosen) && !listed.includes(chosen) ? [chosen] : [])];
  return html`<optgroup label="${reader.t.text('settings.timeZonesCommon')}">${common.map(option)}</optgroup>
    <optgroup label="${reader.t.text('settings.timeZonesAll')}">${listed.filter((z) => !(COMMON_TIME_ZONES as readonly string[]).includes(z))
      .map((zone) => ({ zone, shown: currentZoneName(zone) })).sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0)).map(({ zone }) => option(zone))}</optgroup>`;
}

export function profileSettingsPage(context: PageContext, user: User, state: ProfilePageState): Html {
  const { t } = context;
  const labels = {
    nickname: t.text('settings.nickname'), bio: t.text('settings.bio'), language: t.text('settings.language'), time_zone: t.text('settings.timeZone'),
  };
  const profileErrors = errorsFor(state.errors, 'nickname', 'bio', 'language', 'time_zone');
  const avatarErrors = errorsFor(state.errors, 'avatar');
  const dataErrors = errorsFor(state.errors, 'password', 'code');
  const words: ProblemWords = { t, labels };
  const form = state.form ?? { nickname: user.nickname, bio: user.bio, language: user.language ?? '', timeZone: user.timeZone ?? '' };
  return settingsLayout(t.text('settings.profileTitle'), context, '/settings/profile', html`<section class="card">
<h1>${t.text('settings.profileTitle')}</h1>
${notice(t, state.notice)}
<div class="profile">
  <img class="avatar" src="${avatarSrc(user)}" alt="${t.text('settings.currentAvatar')}" width="96" height="96">
  <p>${t.text('settings.publicPage')} <a href="/u/${encodeURIComponent(user.username)}">/u/${user.username}</a></p>
</div>
</section>
<section class="card" aria-labelledby="about-heading">
<h2 id="about-heading">${t.text('settings.aboutYou')}</h2>
${errorSummary(profileErrors, words)}
<form method="post" action="/settings/profile">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="nickname">${labels.nickname}</label>
  <input type="text" id="nickname" name="nickname" value="${form.nickname}" maxlength="${NICKNAME_FIELD_MAX_UNITS}" autocomplete="nickname" ${control(profileErrors, 'nickname', { hint: 'nickname-hint' })}>
  ${fieldMessage(profileErrors, 'nickname', { words })}
  <p class="hint" id="nickname-hint">${t.text('settings.nicknameHint', { max: NICKNAME_MAX_LENGTH, username: user.username })}</p>
  <label for="bio">${labels.bio}</label>
  <input type="text" id="bio" name="bio" value="${form.bio}" maxlength="${BIO_MAX_LENGTH}" ${control(profileErrors, 'bio', { hint: 'bio-hint' })}>
  ${fieldMessage(profileErrors, 'bio', { words })}
  <p class="hint" id="bio-hint">${t.text('settings.bioHint', { max: BIO_MAX_LENGTH })}</p>
  <label for="language">${labels.language}</label>
  <select id="language" name="language" ${control(profileErrors, 'language', { hint: 'language-hint' })}>
    <option value=""${form.language === '' ? html` selected` : ''}>${t.text('settings.browserLanguage')}</option>
    ${LOCALES.map((l) => html`<option value="${l}" lang="${l}"${l === form.language ? html` selected` : ''}>${LOCALE_NAMES[l]}</option>`)}
  </select>
  ${fieldMessage(profileErrors, 'language', { words })}
  <p class="hint" id="language-hint">${t.text('settings.languageHint')}</p>
  <label for="time_zone">${labels.time_zone}</label>
  <select id="time_zone" name="time_zone" ${control(profileErrors, 'time_zone', { hint: 'time-zone-hint' })}>
    <option value=""${form.timeZone === '' ? html` selected` : ''}>${t.text('settings.siteTimeZone', { offset: timeZoneListing(state.siteTimeZone, t.locale, context.now).offset })}</option>
    ${timeZoneOptions(context, form.timeZone)}
  </select>
  ${fieldMessage(profileErrors, 'time_zone', { words })}
  <p class="hint" id="time-zone-hint">${t.text('settings.timeZoneHint', { zone: timeZoneLabel(context, state.siteTimeZone) })}</p>
  <div class="actions"><button type="submit">${t.text('settings.saveProfile')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="avatar-heading">
<h2 id="avatar-heading">${t.text('settings.avatar')}</h2>
${alert(t, avatarErrors)}
<form method="post" action="/settings/profile/avatar" enctype="multipart/form-data">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="avatar">${t.text('settings.newAvatar')}</label>
  <input type="file" id="avatar" name="avatar" accept="image/png,image/jpeg,image/webp,image/gif" required ${control(avatarErrors, 'avatar', { hint: 'avatar-hint' })}>
  ${fieldMessage(avatarErrors, 'avatar', { words: { t } })}
  <p class="hint" id="avatar-hint">${t.text('settings.avatarHint', { kilobytes: AVATAR_MAX_BYTES / 1024 })}</p>
  <div class="actions"><button type="submit">${t.text('settings.uploadAvatar')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="data-heading">
<h2 id="data-heading">${t.text('settings.dataHeading')}</h2>
<p>${t.text('settings.dataSummary')}</p>
${alert(t, dataErrors)}
<form method="post" action="/settings/account/data">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${ownerProofInputs(t, 'data-', state.twoStep, dataErrors)}
  <div class="actions"><button type="submit">${t.text('settings.dataButton')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="delete-heading">
<h2 id="delete-heading">${t.text('settings.deleteHeading')}</h2>
<p>${t.text('settings.deleteSummary')}</p>
<form method="post" action="/settings/account/delete">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">${t.text('settings.deleteButton')}</button>
</form>
</section>`);
}

/** What deleting the account ends, asked with the password (or a second-factor code) first. */
export function deleteAccountConfirmation(
  t: Translator, user: User, facts: { totp: boolean; apps: Client[]; publishedPosts: number; error?: FormError | undefined },
): Confirmation {
  const strong = (chunks: Array<string | Html>) => html`<strong>${chunks}</strong>`;
  return {
    section: '/settings/profile',
    title: t.text('settings.deleteTitle'),
    consequences: html`<p>${rich(t, 'settings.deleteIntro', { username: user.username, b: strong })}</p>
<ul>
  <li>${t.text('settings.deleteSessions')}</li>
  <li>${t.text('settings.deleteAppAccess')}</li>
  ${facts.apps.length > 0 ? html`<li>${rich(t, 'settings.deleteOwnApps', {
    // Each name isolated: two right-to-left names beside a separator would swap places (UAX #9).
    count: facts.apps.length, names: facts.apps.map((a) => isolated(a.name)), b: strong,
  })}</li>` : ''}
  <li>${t.text('settings.deleteRemoves')}</li>
</ul>
<p>${t.text('settings.deleteHidesPosts', { count: facts.publishedPosts })}</p>
<p>${t.text('settings.deleteUsernameReserved')}</p>`,
    action: '/settings/account/delete',
    fields: {},
    button: t.text('settings.deleteConfirm'),
    cancel: '/settings/profile',
    error: facts.error,
    inputs: ownerProofInputs(t, '', facts.totp, facts.error),
  };
}

/**
 * The password, and with two-step verification on a code that may stand for it (`confirmOwner`):
 * what deleting the account and downloading its data ask. `prefix` keeps the ids apart on a page
 * with other forms; a problem is told in the form's summary, which each field points to.
 */
function ownerProofInputs(t: Translator, prefix: string, twoStep: boolean, errors: FormErrors): Html {
  return html`<label for="${prefix}password">${t.text('settings.yourPassword')}</label>
  <input type="password" id="${prefix}password" name="password" autocomplete="current-password" maxlength="256" ${invalid(errors, 'password')}>
  ${twoStep ? html`<label for="${prefix}code">${t.text('settings.codeInPlaceLabel')}</label>
  <input type="text" id="${prefix}code" name="code" inputmode="text" autocomplete="one-time-code" maxlength="32" ${invalid(errors, 'code')}>` : ''}`;
}

/** After the account was deleted: no session, nothing more to do. */
export function accountDeletedPage(context: PageContext): Html {
  const { t } = context;
  return layout(t.text('settings.deletedTitle'), context, html`<section class="card narrow">
<h1>${t.text('settings.deletedHeading')}</h1>
<p>${t.text('settings.deletedText')}</p>
<p class="links"><a href="/">${t.text('common.backHome')}</a></p>
</section>`);
}

// ---- API tokens ----------------------------------------------------------------------------

export interface TokenForm {
  name: string;
  scopes: string[];
  expiresInDays: string;
}

export interface TokensPageState {
  tokens: PersonalToken[];
  now: number;
  form?: TokenForm;
  /** Every field at fault, each named beside its control (issue 18 item 10). */
  errors?: FormErrors;
  created?: { token: string; name: string } | undefined;
  notice?: Words | undefined;
}

export function tokensPage(context: PageContext, state: TokensPageState): Html {
  const { t } = context;
  const form = state.form ?? { name: '', scopes: [...RESOURCE_SCOPES], expiresInDays: String(DEFAULT_PERSONAL_TOKEN_DAYS) };
  const labels = { name: t.text('tokens.name'), scopes: t.text('tokens.scopes'), expires_in_days: t.text('tokens.expires'), password: t.text('settings.yourPassword') };
  const words: ProblemWords = { t, labels };
  const code = (chunks: Array<string | Html>) => html`<code>${chunks}</code>`;
  const liveTokens = state.tokens.filter((token) => personalTokenStatus(token, state.now) === 'active').length;
  return settingsLayout(t.text('tokens.title'), context, '/settings/tokens', html`<section class="card">
<h1>${t.text('tokens.title')}</h1>
<p>${rich(t, 'tokens.intro', { a: (chunks) => html`<a href="/docs">${chunks}</a>`, code })}</p>
${notice(t, state.notice)}
${state.created ? html`<div class="notice created" role="status">
  <p><strong>${rich(t, 'tokens.created', { name: chosenName(state.created.name) })}</strong></p>
  ${shownOnce(t, 'new-token', t.text('tokens.yourNewToken'), state.created.token)}
</div>` : ''}
</section>
<section class="card" aria-labelledby="create-heading">
<h2 id="create-heading">${t.text('tokens.createHeading')}</h2>
<p class="hint">${sentences([t.text(liveTokens >= MAX_PERSONAL_TOKENS ? 'tokens.limitReached' : 'tokens.limit', { max: MAX_PERSONAL_TOKENS }), t.text('tokens.dailyLimit', { max: PERSONAL_TOKENS_PER_DAY })])}</p>
${errorSummary(state.errors, words)}
<form method="post" action="/settings/tokens">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="name">${labels.name}</label>
  <input type="text" id="name" name="name" value="${form.name}" required maxlength="60" ${control(state.errors, 'name', { hint: 'name-hint' })}>
  ${fieldMessage(state.errors, 'name', { words })}
  <p class="hint" id="name-hint">${t.text('tokens.nameHint')}</p>
  <fieldset id="scopes" ${control(state.errors, 'scopes')}>
    <legend>${labels.scopes}</legend>
    ${fieldMessage(state.errors, 'scopes', { words })}
    ${RESOURCE_SCOPES.map((scope) => {
      const described = scopeWords(t, scope);
      return html`<div class="check">
      <input type="checkbox" id="scope-${scope.replace(':', '-')}" name="scopes" value="${scope}" ${form.scopes.includes(scope) ? html`checked` : ''}>
      <label for="scope-${scope.replace(':', '-')}"><code>${scope}</code> <span class="muted">${sentences([described.allows, described.notAllowed])}</span></label>
    </div>`;
    })}
  </fieldset>
  <label for="expires_in_days">${labels.expires_in_days}</label>
  <select id="expires_in_days" name="expires_in_days" ${control(state.errors, 'expires_in_days')}>
    ${PERSONAL_TOKEN_LIFETIMES.map((d) => {
      const value = d === null ? 'none' : String(d);
      return html`<option value="${value}" ${value === form.expiresInDays ? html`selected` : ''}>${d === null ? t.text('tokens.noExpiry') : t.text('tokens.inDays', { days: d })}</option>`;
    })}
  </select>
  ${fieldMessage(state.errors, 'expires_in_days', { words })}
  <label for="password">${labels.password}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="256" ${control(state.errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(state.errors, 'password', { words })}
  <p class="hint" id="password-hint">${t.text('tokens.passwordHint')}</p>
  <div class="actions"><button type="submit">${t.text('tokens.create')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="list-heading">
<h2 id="list-heading">${t.text('tokens.listHeading')}</h2>
${state.tokens.length === 0 ? html`<p class="muted">${t.text('tokens.none')}</p>` : stackedTable(
  [{ heading: labels.name, cellClass: 'strong' }, { heading: labels.scopes }, { heading: t.text('tokens.createdAt') }, { heading: t.text('tokens.expiresAt') }, { heading: t.text('settings.lastUsed') }, { heading: t.text('tokens.status') }, { heading: t.text('settings.actions'), buttons: true }],
  state.tokens.map((token) => {
    const status = personalTokenStatus(token, state.now);
    return { cells: [
      chosenName(token.name),
      scopeList(token.scope).map((s) => html`<code>${s}</code> `),
      at(context, token.createdAt),
      token.expiresAt === null ? t.text('settings.never') : at(context, token.expiresAt),
      at(context, token.lastUsedAt),
      tokenStatusWords(t, status),
      status === 'active' ? html`<form method="post" action="/settings/tokens/revoke" class="inline">
      <input type="hidden" name="_csrf" value="${context.csrf}">
      <input type="hidden" name="token_id" value="${token.id}">
      <button type="submit" class="danger" aria-label="${t.text('tokens.revokeNamed', { name: isolated(token.name) })}">${t.text('tokens.revoke')}</button>
    </form>` : '',
    ] };
  }))}
</section>`, { script: state.created ? 'copy' : undefined });
}

/** Revoking a personal token, asked first. */
export function revokeTokenConfirmation(t: Translator, token: PersonalToken): Confirmation {
  return {
    section: '/settings/tokens',
    title: t.text('tokens.revokeTitle', { name: isolated(token.name) }),
    consequences: html`<p>${rich(t, 'tokens.revokeConsequences', { code: (chunks) => html`<code>${chunks}</code>` })}</p>`,
    action: '/settings/tokens/revoke',
    fields: { token_id: String(token.id) },
    button: t.text('tokens.revokeConfirm'),
    cancel: '/settings/tokens',
  };
}


// ---- Authorized applications ---------------------------------------------------------------

/** The host whose client ID metadata document describes an app, when one does (INTERFACE section 13). */
function describedBy(t: Translator, client: Client): Html | '' {
  const host = documentHost(client);
  return host === undefined ? '' : html`<p class="document-host">${rich(t, 'consent.documentHost', { host, b: (chunks: Array<string | Html>) => html`<strong>${chunks}</strong>` })}</p>`;
}

export function applicationsPage(context: PageContext, apps: AuthorizedApplication[], state: { notice?: Words | undefined; error?: Words | undefined }): Html {
  const { t } = context;
  const strong = (chunks: Array<string | Html>) => html`<strong>${chunks}</strong>`;
  return settingsLayout(t.text('apps.authorizedTitle'), context, '/settings/applications', html`<section class="card">
<h1>${t.text('apps.authorizedTitle')}</h1>
<p>${t.text('apps.authorizedIntro')}</p>
${notice(t, state.notice)}
${state.error ? html`<p class="alert" role="alert">${t.text(state.error.key, state.error.values)}</p>` : ''}
${apps.length > 1 ? html`<form method="post" action="/settings/applications/revoke-all">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">${t.text('apps.revokeAllButton', { count: apps.length })}</button>
</form>` : ''}
</section>
${apps.length === 0 ? html`<p class="muted card">${t.text('apps.noneAuthorized')}</p>` : apps.map((app) => html`<section class="card app" aria-labelledby="app-${app.client.clientId}">
  <h2 id="app-${app.client.clientId}">${chosenName(app.client.name)}</h2>
  ${describedBy(t, app.client)}
  ${app.client.homepageUrl ? html`<p class="links">${homepageLink(app.client.homepageUrl)}</p>` : ''}
  ${app.client.description ? html`<p>${app.client.description}</p>` : ''}
  ${app.scopes.length > 0 ? html`<p>${t.text('apps.canRead')}</p>${scopeItems(t, app.scopes)}` : ''}
  <dl class="facts">
    <dt>${t.text('apps.firstAuthorized')}</dt><dd>${at(context, app.firstAuthorizedAt)}</dd>
    <dt>${t.text('settings.lastUsed')}</dt><dd>${at(context, app.lastUsedAt)}</dd>
  </dl>
  <form method="post" action="/settings/applications/revoke">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    <input type="hidden" name="client_id" value="${app.client.clientId}">
    <details class="ask-first">
      <summary class="button danger">${t.text('apps.revokeAccessButton')}</summary>
      <p>${rich(t, 'apps.revokeAccessConsequences', { name: chosenName(app.client.name), b: strong })}</p>
      <button type="submit" class="danger" aria-label="${t.text('apps.revokeAccessNamed', { name: isolated(app.client.name) })}">${t.text('apps.revokeAccessConfirm')}</button>
    </details>
  </form>
</section>`)}`);
}

/** Withdrawing every app's access, asked first. */
export function revokeAllConfirmation(t: Translator, apps: AuthorizedApplication[]): Confirmation {
  return {
    section: '/settings/applications',
    title: t.text('apps.revokeAllTitle'),
    consequences: html`<p>${t.text('apps.revokeAllConsequences', { count: apps.length })}</p>
<ul>${apps.map((a) => html`<li><strong>${chosenName(a.client.name)}</strong></li>`)}</ul>
<p>${t.text('apps.revokeAllAgain')}</p>`,
    action: '/settings/applications/revoke-all',
    fields: {},
    button: t.text('apps.revokeAllConfirm'),
    cancel: '/settings/applications',
  };
}

// ---- Developer applications ----------------------------------------------------------------

export interface ClientForm {
  name: string;
  description: string;
  homepage: string;
  redirectUris: string;
  type: string;
  /** One per line. */
  postLogoutRedirectUris: string;
  backchannelLogoutUri: string;
}

const LOGOUT_FIELDS = ['post_logout_redirect_uris', 'backchannel_logout_uri'];

/** The labels of the registration form's fields, which its problems are named by. */
function clientLabels(t: Translator): Record<string, string> {
  return {
    name: t.text('apps.name'), description: t.text('apps.description'), homepage: t.text('apps.homepage'), redirect_uris: t.text('apps.redirectUris'),
    type: t.text('apps.type'), post_logout_redirect_uris: t.text('apps.postLogoutUris'), backchannel_logout_uri: t.text('apps.backchannelUri'),
  };
}

/** "(optional)" after a field's name: a space before it in English, none before Chinese's full-width bracket. */
function optional(t: Translator): Html {
  const words = t.text('apps.optional');
  return html`${spaceBetween('', words)}<span class="muted">${words}</span>`;
}
const code = (chunks: Array<string | Html>) => html`<code>${chunks}</code>`;

/** The sign-out fields of the registration form and of an app's page (RP-Initiated and Back-Channel Logout). */
function logoutFields(t: Translator, values: { postLogoutRedirectUris: string; backchannelLogoutUri: string }, errors: FormErrors): Html {
  const words: ProblemWords = { t };
  return html`<label for="post_logout_redirect_uris">${t.text('apps.postLogoutUris')}${optional(t)}</label>
  <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" ${control(errors, 'post_logout_redirect_uris', { hint: 'post-logout-hint' })}>${values.postLogoutRedirectUris}</textarea>
  ${fieldMessage(errors, 'post_logout_redirect_uris', { words })}
  <p class="hint" id="post-logout-hint">${rich(t, 'apps.postLogoutHint', { code })}</p>
  <label for="backchannel_logout_uri">${t.text('apps.backchannelUri')}${optional(t)}</label>
  <input type="url" id="backchannel_logout_uri" name="backchannel_logout_uri" value="${values.backchannelLogoutUri}" maxlength="2000" placeholder="https://example.com/backchannel-logout" ${control(errors, 'backchannel_logout_uri', { hint: 'backchannel-hint' })}>
  ${fieldMessage(errors, 'backchannel_logout_uri', { words })}
  <p class="hint" id="backchannel-hint">${rich(t, 'apps.backchannelHint', { code })}</p>`;
}

/** What an app says about itself, as the form holds it: at registration and on the app's page. */
export type ClientDetailsForm = Pick<ClientForm, 'name' | 'description' | 'homepage'>;

/** The name, description and homepage fields of the registration form and of an app's page (`checkClientDetails`'s rules). */
function detailsFields(t: Translator, values: ClientDetailsForm, errors: FormErrors, words: ProblemWords): Html {
  return html`<label for="name">${t.text('apps.name')}</label>
  <input type="text" id="name" name="name" value="${values.name}" required maxlength="80" ${control(errors, 'name')}>
  ${fieldMessage(errors, 'name', { words })}
  <label for="description">${t.text('apps.description')}${optional(t)}</label>
  <textarea id="description" name="description" rows="3" maxlength="500" ${control(errors, 'description')}>${values.description}</textarea>
  ${fieldMessage(errors, 'description', { words })}
  <label for="homepage">${t.text('apps.homepage')}${optional(t)}</label>
  <input type="url" id="homepage" name="homepage" value="${values.homepage}" maxlength="2000" placeholder="https://example.com" ${control(errors, 'homepage')}>
  ${fieldMessage(errors, 'homepage', { words })}`;
}

function clientTypeText(t: Translator, type: string): string {
  return type === 'public' ? t.text('apps.typePublic') : t.text('apps.typeConfidential');
}

export function developersPage(context: PageContext, clients: Client[], state: { form?: ClientForm; errors?: FormErrors }): Html {
  const { t } = context;
  const form = state.form ?? { name: '', description: '', homepage: '', redirectUris: '', type: 'confidential', postLogoutRedirectUris: '', backchannelLogoutUri: '' };
  const errors = state.errors;
  const words: ProblemWords = { t, labels: clientLabels(t) };
  // A deactivated app is kept (its row holds the record of what it did and keeps its tokens
  // refused), so the list would only grow: the live ones are the list, the rest folded away below.
  const active = clients.filter((c) => c.status === 'active');
  const deactivated = clients.filter((c) => c.status !== 'active');
  const appList = (listed: Client[]) => html`<ul class="app-list links">${listed.map((c) => html`<li>
  <a href="/settings/developers/${c.clientId}">${chosenName(c.name)}</a> <span class="tag">${clientTypeText(t, c.type)}</span>
</li>`)}</ul>`;
  return settingsLayout(t.text('apps.developersTitle'), context, '/settings/developers', html`<section class="card">
<h1>${t.text('apps.developersTitle')}</h1>
<p>${rich(t, 'apps.developersIntro', { a: (chunks) => html`<a href="/docs">${chunks}</a>` })}</p>
${clients.length === 0 ? html`<p class="muted">${t.text('apps.noneRegistered')}</p>` : active.length === 0 ? html`<p class="muted">${t.text('apps.noneActive')}</p>` : appList(active)}
${deactivated.length === 0 ? '' : html`<details class="deactivated-apps"><summary>${t.text('apps.deactivatedApps', { count: deactivated.length })}</summary>
<p class="hint">${t.text('apps.deactivatedAppsHint')}</p>
${appList(deactivated)}
</details>`}
</section>
<section class="card" aria-labelledby="register-heading">
<h2 id="register-heading">${t.text('apps.registerHeading')}</h2>
<p class="hint">${sentences([t.text(active.length >= MAX_APPS_PER_OWNER ? 'apps.limitReached' : 'apps.limit', { max: MAX_APPS_PER_OWNER }), t.text('apps.dailyLimit', { max: APP_REGISTRATIONS_PER_DAY })])}</p>
${errorSummary(errors, words)}
<form method="post" action="/settings/developers">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${detailsFields(t, form, errors, words)}
  <label for="redirect_uris">${t.text('apps.redirectUris')}</label>
  <textarea id="redirect_uris" name="redirect_uris" rows="3" required ${control(errors, 'redirect_uris', { hint: 'redirect-hint' })}>${form.redirectUris}</textarea>
  ${fieldMessage(errors, 'redirect_uris', { words })}
  <p class="hint" id="redirect-hint">${sentences([t.text('apps.redirectHintLines'), t.text('apps.redirectHint')])}</p>
  <fieldset id="type" ${control(errors, 'type')}>
    <legend>${t.text('apps.type')}</legend>
    ${fieldMessage(errors, 'type', { words })}
    <div class="check"><input type="radio" id="type-confidential" name="type" value="confidential" ${form.type !== 'public' ? html`checked` : ''}>
      <label for="type-confidential">${t.text('apps.typeConfidential')} <span class="muted">— ${t.text('apps.typeConfidentialHint')}</span></label></div>
    <div class="check"><input type="radio" id="type-public" name="type" value="public" ${form.type === 'public' ? html`checked` : ''}>
      <label for="type-public">${t.text('apps.typePublic')} <span class="muted">— ${t.text('apps.typePublicHint')}</span></label></div>
  </fieldset>
  ${logoutFields(t, form, errors)}
  <div class="actions"><button type="submit">${t.text('apps.register')}</button></div>
</form>
</section>`);
}

export interface ClientPageState {
  /** The service's issuer (BASE_URL): what an app's library is pointed at. */
  issuer: string;
  /** PREVIOUS_CLIENT_SECRET_HOURS: how long a rotated secret keeps working, 0 not at all. */
  keepPreviousSecretHours: number;
  secret?: string | undefined;
  notice?: Words | undefined;
  errors?: FormErrors;
  redirectUris?: string | undefined;
  /** The details form as sent, when it is shown again with an error. */
  details?: ClientDetailsForm | undefined;
  /** The sign-out form as sent, when it is shown again with an error. */
  logout?: { postLogoutRedirectUris: string; backchannelLogoutUri: string } | undefined;
  /** Where to sign in again, when the sign-in is too old for changing the app (`isRecentSignIn`). */
  signInAgain?: string | undefined;
}

export function clientPage(context: PageContext, client: Client, state: ClientPageState): Html {
  const { t } = context;
  const active = client.status === 'active';
  const base = `/settings/developers/${client.clientId}`;
  const logoutErrors = errorsFor(state.errors, ...LOGOUT_FIELDS);
  const redirectErrors = errorsFor(state.errors, 'redirect_uris');
  const detailErrors = errorsFor(state.errors, 'name', 'description', 'homepage');
  const details = state.details ?? { name: client.name, description: client.description, homepage: homepageAsRead(client.homepageUrl) };
  const words: ProblemWords = { t, labels: clientLabels(t) };
  const logout = state.logout ?? { postLogoutRedirectUris: client.postLogoutRedirectUris.join('\n'), backchannelLogoutUri: client.backchannelLogoutUri ?? '' };
  const link = (href: string) => (chunks: Array<string | Html>) => html`<a href="${href}">${chunks}</a>`;
  const previous = livePreviousSecret(client, context.now);
  const intro = rotationWords('apps.rotateIntro', state.keepPreviousSecretHours);
  return settingsLayout(isolated(client.name), context, '/settings/developers', html`<section class="card">
<p class="links"><a href="/settings/developers">← ${t.text('apps.developersTitle')}</a></p>
<h1>${chosenName(client.name)}</h1>
${notice(t, state.notice)}
${active && state.signInAgain ? html`<p class="notice" role="status">${rich(t, 'apps.signInAgain', { a: link(state.signInAgain) })}</p>` : ''}
${state.secret ? html`<div class="notice created" role="status">${shownOnce(t, 'client-secret', t.text('apps.clientSecret'), state.secret)}</div>` : ''}
<dl class="facts">
  <dt>${t.text('apps.clientId')}</dt><dd>${copyableField(t, 'client-id', t.text('apps.clientId'), client.clientId)}</dd>
  <dt>${t.text('apps.issuer')}</dt><dd>${copyableField(t, 'issuer', t.text('apps.issuer'), state.issuer)}</dd>
  <dt>${t.text('apps.discovery')}</dt><dd>${copyableField(t, 'discovery', t.text('apps.discovery'), `${state.issuer}/.well-known/openid-configuration`)}</dd>
  <dt>${t.text('apps.type')}</dt><dd>${clientTypeText(t, client.type)}${client.type === 'public' ? ` ${t.text('apps.publicNoSecret')}` : ''}</dd>
  <dt>${t.text('apps.status')}</dt><dd>${active ? t.text('apps.statusActive') : t.text('apps.statusDeactivated')}</dd>
  ${client.homepageUrl ? html`<dt>${t.text('apps.homepage')}</dt><dd class="links">${homepageLink(client.homepageUrl)}</dd>` : ''}
  ${client.description ? html`<dt>${t.text('apps.description')}</dt><dd>${client.description}</dd>` : ''}
  <dt>${t.text('apps.registered')}</dt><dd>${at(context, client.createdAt)}</dd>
</dl>
<p class="hint">${t.text('apps.connectionHint')}</p>
${client.verifiedAt === null ? '' : html`<p class="notice">${t.text('apps.verifiedChangeHint')}</p>`}
</section>
${active ? html`<section class="card" aria-labelledby="details-heading">
<h2 id="details-heading">${t.text('apps.detailsHeading')}</h2>
<p>${t.text('apps.detailsIntro')}</p>
${errorSummary(detailErrors, words)}
<form method="post" action="${base}/details">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${detailsFields(t, details, detailErrors, words)}
  <div class="actions"><button type="submit">${t.text('apps.saveDetails')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="uris-heading">
<h2 id="uris-heading">${t.text('apps.redirectUris')}</h2>
${errorSummary(redirectErrors, words)}
<form method="post" action="${base}/redirect-uris">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="redirect_uris">${t.text('apps.redirectUrisPerLine')}</label>
  <textarea id="redirect_uris" name="redirect_uris" rows="4" required ${control(redirectErrors, 'redirect_uris', { hint: 'redirect-hint' })}>${state.redirectUris ?? client.redirectUris.join('\n')}</textarea>
  ${fieldMessage(redirectErrors, 'redirect_uris', { words })}
  <p class="hint" id="redirect-hint">${t.text('apps.redirectHint')}</p>
  <div class="actions"><button type="submit">${t.text('apps.saveRedirectUris')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="logout-heading">
<h2 id="logout-heading">${t.text('apps.signOutHeading')}</h2>
<p>${rich(t, 'apps.signOutIntro', { a: link('/docs#logout') })}</p>
${errorSummary(logoutErrors, words)}
<form method="post" action="${base}/logout-uris">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${logoutFields(t, logout, logoutErrors)}
  <div class="actions"><button type="submit">${t.text('apps.saveSignOut')}</button></div>
</form>
</section>
<section class="card" aria-labelledby="par-heading">
<h2 id="par-heading">${t.text('apps.parHeading')}</h2>
<p>${rich(t, 'apps.parIntro', { code, a: link('/docs#par') })}</p>
<form method="post" action="${base}/pushed-requests">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <div class="check"><input type="checkbox" id="require-par" name="require_pushed_authorization_requests" value="1" ${client.requirePushedAuthorizationRequests ? 'checked' : ''}><label for="require-par">${t.text('apps.parRequire')}</label></div>
  <p class="hint">${t.text('apps.parHint')}</p>
  <div class="actions"><button type="submit">${t.text('apps.save')}</button></div>
</form>
</section>
${client.type === 'confidential' ? html`<section class="card" aria-labelledby="secret-heading">
<h2 id="secret-heading">${t.text('apps.clientSecret')}</h2>
<p>${t.text(intro.key, intro.values)}</p>
<form method="post" action="${base}/rotate-secret">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="secondary">${t.text('apps.rotateButton')}</button>
</form>
${previous ? html`<dl class="facts">
  <dt>${t.text('apps.previousSecretUntil')}</dt><dd>${timeOf(context, previous.expiresAt)}</dd>
</dl>
<p class="hint">${t.text('apps.previousSecretHint')}</p>
<form method="post" action="${base}/delete-previous-secret">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">${t.text('apps.deletePreviousButton')}</button>
</form>` : ''}
</section>` : ''}
<section class="card" aria-labelledby="deactivate-heading">
<h2 id="deactivate-heading">${t.text('apps.deactivateHeading')}</h2>
<p>${t.text('apps.deactivateIntro')}</p>
<form method="post" action="${base}/deactivate">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">${t.text('apps.deactivateButton')}</button>
</form>
</section>` : html`<section class="card"><p>${t.text('apps.deactivatedText')}</p></section>`}`, { script: 'copy' });
}

/** A value to paste into an app's settings: a read-only field (selectable without script) and its Copy button. */
function copyableField(t: Translator, id: string, label: string, value: string): Html {
  return html`<div class="copy-row"><input type="text" id="${id}" class="mono" value="${value}" readonly spellcheck="false" aria-label="${label}">${copyButton(t, id)}</div>`;
}

/** Deleting the secret a rotation replaced, asked first: it stops working at once. */
export function deletePreviousSecretConfirmation(t: Translator, client: Client): Confirmation {
  return {
    section: '/settings/developers',
    title: t.text('apps.deletePreviousTitle', { name: isolated(client.name) }),
    consequences: html`<p>${rich(t, 'apps.deletePreviousConsequences', { b: (chunks) => html`<strong>${chunks}</strong>`, code })}</p>`,
    action: `/settings/developers/${client.clientId}/delete-previous-secret`,
    fields: {},
    button: t.text('apps.deletePreviousConfirm'),
    cancel: `/settings/developers/${client.clientId}`,
  };
}

/**
 * What a rotation does to the old secret, in the words of `key` (the `…Kept` variant when the
 * operator keeps a rotated secret working for `keepPreviousHours`, PREVIOUS_CLIENT_SECRET_HOURS).
 */
export function rotationWords(key: 'apps.rotateIntro' | 'apps.rotateConsequences' | 'apps.noticeRotated', keepPreviousHours: number): Words {
  return keepPreviousHours > 0 ? { key: `${key}Kept`, values: { hours: keepPreviousHours } } : { key };
}

/** Rotating a client secret, asked first: the old secret fails at once, or keeps working a while. */
export function rotateSecretConfirmation(t: Translator, client: Client, keepPreviousHours: number): Confirmation {
  const words = rotationWords('apps.rotateConsequences', keepPreviousHours);
  return {
    section: '/settings/developers',
    title: t.text('apps.rotateTitle', { name: isolated(client.name) }),
    consequences: html`<p>${rich(t, words.key, { ...words.values, b: (chunks) => html`<strong>${chunks}</strong>`, code })}</p>`,
    action: `/settings/developers/${client.clientId}/rotate-secret`,
    fields: {},
    button: t.text('apps.rotateConfirm'),
    cancel: `/settings/developers/${client.clientId}`,
  };
}

/** Deactivating an app, asked first. */
export function deactivateConfirmation(t: Translator, client: Client): Confirmation {
  return {
    section: '/settings/developers',
    title: t.text('apps.deactivateTitle', { name: isolated(client.name) }),
    consequences: html`<p>${rich(t, 'apps.deactivateConsequences', { name: chosenName(client.name), b: (chunks) => html`<strong>${chunks}</strong>` })}</p>`,
    action: `/settings/developers/${client.clientId}/deactivate`,
    fields: {},
    button: t.text('apps.deactivateConfirm'),
    cancel: `/settings/developers/${client.clientId}`,
  };
}
