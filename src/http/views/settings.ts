/** Settings pages: profile (bio, avatar, deletion), API tokens, authorized applications, developer applications. */
import type { AuthorizedApplication } from '../../core/oauth/applications.js';
import { AVATAR_MAX_BYTES } from '../../core/community/avatars.js';
import { DEFAULT_PERSONAL_TOKEN_DAYS, PERSONAL_TOKEN_LIFETIMES } from '../../core/credentials/personal-tokens.js';
import type { User } from '../../core/accounts/ports.js';
import type { PersonalToken } from '../../core/credentials/ports.js';
import type { Client } from '../../core/oauth/ports.js';
import { RESOURCE_SCOPES, SCOPES, scopeList } from '../../core/oauth/scopes.js';
import { avatarSrc, when } from './community.js';
import { type Html, html } from './html.js';
import { type FormError, type FormErrors, control, errorSummary, errorsFor, fieldMessage, invalid } from './forms.js';
import { type PageContext, layout } from './layout.js';
import { BIO_MAX_LENGTH } from '../../core/accounts/accounts.js';

const SECTIONS = [
  { path: '/settings/profile', label: 'Profile' },
  { path: '/settings/tokens', label: 'API tokens' },
  { path: '/settings/applications', label: 'Authorized applications' },
  { path: '/settings/developers', label: 'Developer applications' },
  { path: '/settings/security', label: 'Security' },
  { path: '/settings/email', label: 'E-mail', words: 'recovery.emailNav' },
] as const;

export type SettingsSection = (typeof SECTIONS)[number]['path'];

export { type FormError, type FormErrors, invalid, sentence } from './forms.js';

/** The summary of a form's problems (`errorSummary`), by the name the settings pages know it. */
export const alert = errorSummary;

export function notice(text: string | undefined): Html | string {
  return text ? html`<p class="notice" role="status">${text}</p>` : '';
}

export function settingsLayout(title: string, context: PageContext, current: SettingsSection, main: Html, options: { script?: 'webauthn' | 'copy' | undefined } = {}): Html {
  return layout(title, context, html`<div class="settings">
<nav class="settings-nav" aria-label="Settings">
  <ul>${SECTIONS.map((s) => html`<li><a href="${s.path}" ${s.path === current ? html`aria-current="page"` : ''}>${'words' in s ? context.t.text(s.words) : s.label}</a></li>`)}</ul>
</nav>
<div class="settings-main">${main}</div>
</div>`, options);
}

/**
 * A secret shown once, in a read-only field: selectable and copyable without any script. The
 * page's `copy` script (public/copy.js) shows the Copy button, hidden without it.
 */
export function shownOnce(id: string, label: string, value: string): Html {
  return html`<div class="secret">
  <label for="${id}">${label}</label>
  <div class="copy-row">
    <input type="text" id="${id}" class="mono" value="${value}" readonly autocomplete="off" spellcheck="false" aria-describedby="${id}-hint">
    <button type="button" class="secondary" data-copy="${id}" hidden>Copy</button>
  </div>
  <p class="hint" id="${id}-hint" data-copied="Copied. It will not be shown again.">Select the field and copy it now (Ctrl+C or ⌘C, or long-press on a phone). It will not be shown again.</p>
</div>`;
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
${alert(c.error)}
${c.consequences}
<form method="post" action="${c.action}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${Object.entries(c.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <input type="hidden" name="confirm" value="yes">
  ${c.inputs ?? ''}
  <div class="actions"><button type="submit" class="danger">${c.button}</button> <a href="${c.cancel}" class="button secondary">Cancel</a></div>
</form>
</section>`);
}


function scopeItems(scopes: readonly string[]): Html {
  return html`<ul class="scopes">${scopes.map((s) => html`<li><code>${s}</code>${s in SCOPES ? html` — ${SCOPES[s as keyof typeof SCOPES].allows}` : ''}</li>`)}</ul>`;
}

// ---- Profile -------------------------------------------------------------------------------

export interface ProfilePageState {
  error?: FormError | undefined;
  notice?: string | undefined;
  /** The bio as sent, shown again with its error. */
  bio?: string | undefined;
}

export function profileSettingsPage(context: PageContext, user: User, state: ProfilePageState): Html {
  const bioError = state.error?.field === 'bio' ? state.error : undefined;
  const avatarError = state.error?.field === 'avatar' ? state.error : undefined;
  return settingsLayout('Profile', context, '/settings/profile', html`<section class="card">
<h1>Profile</h1>
${notice(state.notice)}
<div class="profile">
  <img class="avatar" src="${avatarSrc(user)}" alt="Your current avatar" width="96" height="96">
  <p>Your public page: <a href="/u/${encodeURIComponent(user.username)}">/u/${user.username}</a></p>
</div>
</section>
<section class="card" aria-labelledby="bio-heading">
<h2 id="bio-heading">Bio</h2>
${alert(bioError)}
<form method="post" action="/settings/profile">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="bio">One line about you</label>
  <input type="text" id="bio" name="bio" value="${state.bio ?? user.bio}" maxlength="${BIO_MAX_LENGTH}" aria-describedby="bio-hint" ${invalid(bioError, 'bio')}>
  <p class="hint" id="bio-hint">Shown on your public page and to apps you allow to read your profile. At most ${BIO_MAX_LENGTH} characters; leave it empty to remove it.</p>
  <div class="actions"><button type="submit">Save bio</button></div>
</form>
</section>
<section class="card" aria-labelledby="avatar-heading">
<h2 id="avatar-heading">Avatar</h2>
${alert(avatarError)}
<form method="post" action="/settings/profile/avatar" enctype="multipart/form-data">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="avatar">New avatar</label>
  <input type="file" id="avatar" name="avatar" accept="image/png,image/jpeg,image/webp,image/gif" required aria-describedby="avatar-hint" ${invalid(avatarError, 'avatar')}>
  <p class="hint" id="avatar-hint">PNG, JPEG, WebP or GIF, at most ${AVATAR_MAX_BYTES / 1024} KB.</p>
  <div class="actions"><button type="submit">Upload avatar</button></div>
</form>
</section>
<section class="card" aria-labelledby="delete-heading">
<h2 id="delete-heading">Delete your account</h2>
<p>Signs you out everywhere, ends every token and app access, deactivates the apps you registered, and removes your bio and avatar. Your username stays reserved. This cannot be undone.</p>
<form method="post" action="/settings/account/delete">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">Delete account…</button>
</form>
</section>`);
}

/** What deleting the account ends, asked with the password (or a second-factor code) first. */
export function deleteAccountConfirmation(
  user: User, facts: { totp: boolean; apps: Client[]; publishedPosts: number; error?: FormError | undefined },
): Confirmation {
  const passwordError = facts.error?.field === 'password' ? facts.error : undefined;
  const codeError = facts.error?.field === 'code' ? facts.error : undefined;
  return {
    section: '/settings/profile',
    title: 'Delete your account?',
    consequences: html`<p>Deleting <strong>${user.username}</strong>:</p>
<ul>
  <li>signs you out of every browser and ends every personal token;</li>
  <li>withdraws every app’s access: their tokens stop working at once;</li>
  ${facts.apps.length > 0 ? html`<li>deactivates the ${facts.apps.length === 1 ? 'application' : `${facts.apps.length} applications`} you registered (${facts.apps.map((a, i) => html`${i > 0 ? ', ' : ''}<strong>${a.name}</strong>`)}): no one can sign in with ${facts.apps.length === 1 ? 'it' : 'them'} any more;</li>` : ''}
  <li>removes your bio, avatar, two-step verification and passkeys, and hides your public page.</li>
</ul>
<p>It leaves your ${facts.publishedPosts === 1 ? '1 published post' : `${facts.publishedPosts} published posts`} and your comments public, under your username.
Delete first any you want gone (<a href="/u/${encodeURIComponent(user.username)}">your posts</a>).</p>
<p>Your username stays reserved: no one, you included, can sign up with it again. This cannot be undone.</p>`,
    action: '/settings/account/delete',
    fields: {},
    button: 'Delete my account',
    cancel: '/settings/profile',
    error: facts.error,
    inputs: html`<label for="password">Your password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" maxlength="256" ${invalid(passwordError, 'password')}>
  ${facts.totp ? html`<label for="code">Or a code from your authenticator app, or a recovery code</label>
  <input type="text" id="code" name="code" inputmode="text" autocomplete="one-time-code" maxlength="32" ${invalid(codeError, 'code')}>` : ''}`,
  };
}

/** After the account was deleted: no session, nothing more to do. */
export function accountDeletedPage(context: PageContext): Html {
  return layout('Account deleted', context, html`<section class="card narrow">
<h1>Your account was deleted</h1>
<p>You are signed out, and every token and app access of the account has ended.</p>
<p><a href="/">Back to the home page</a></p>
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
  notice?: string | undefined;
}

function tokenStatus(token: PersonalToken, now: number): string {
  if (token.revokedAt !== null) return 'Revoked';
  if (token.expiresAt !== null && token.expiresAt <= now) return 'Expired';
  return 'Active';
}

export function tokensPage(context: PageContext, state: TokensPageState): Html {
  const form = state.form ?? { name: '', scopes: [...RESOURCE_SCOPES], expiresInDays: String(DEFAULT_PERSONAL_TOKEN_DAYS) };
  return settingsLayout('API tokens', context, '/settings/tokens', html`<section class="card">
<h1>API tokens</h1>
<p>A personal token lets your own scripts read your data through the <a href="/docs">API</a>, like an app you authorized. Send it as <code>Authorization: Bearer …</code>.</p>
${notice(state.notice)}
${state.created ? html`<div class="notice created" role="status">
  <p><strong>Token “${state.created.name}” created.</strong></p>
  ${shownOnce('new-token', 'Your new token', state.created.token)}
</div>` : ''}
</section>
<section class="card" aria-labelledby="create-heading">
<h2 id="create-heading">Create a token</h2>
${errorSummary(state.errors)}
<form method="post" action="/settings/tokens">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="name">Name</label>
  <input type="text" id="name" name="name" value="${form.name}" required maxlength="60" ${control(state.errors, 'name', { hint: 'name-hint' })}>
  ${fieldMessage(state.errors, 'name')}
  <p class="hint" id="name-hint">What the token is for, such as “backup script”.</p>
  <fieldset id="scopes" ${control(state.errors, 'scopes')}>
    <legend>Scopes</legend>
    ${fieldMessage(state.errors, 'scopes')}
    ${RESOURCE_SCOPES.map((scope) => html`<div class="check">
      <input type="checkbox" id="scope-${scope.replace(':', '-')}" name="scopes" value="${scope}" ${form.scopes.includes(scope) ? html`checked` : ''}>
      <label for="scope-${scope.replace(':', '-')}"><code>${scope}</code> <span class="muted">${SCOPES[scope].allows} Not: ${SCOPES[scope].doesNotAllow}</span></label>
    </div>`)}
  </fieldset>
  <label for="expires_in_days">Expires</label>
  <select id="expires_in_days" name="expires_in_days" ${control(state.errors, 'expires_in_days')}>
    ${PERSONAL_TOKEN_LIFETIMES.map((d) => {
      const value = d === null ? 'none' : String(d);
      return html`<option value="${value}" ${value === form.expiresInDays ? html`selected` : ''}>${d === null ? 'No expiry' : `In ${d} days`}</option>`;
    })}
  </select>
  ${fieldMessage(state.errors, 'expires_in_days')}
  <label for="password">Your password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="256" ${control(state.errors, 'password', { hint: 'password-hint' })}>
  ${fieldMessage(state.errors, 'password')}
  <p class="hint" id="password-hint">Asked again because a token can read your data without you being signed in.</p>
  <div class="actions"><button type="submit">Create token</button></div>
</form>
</section>
<section class="card" aria-labelledby="list-heading">
<h2 id="list-heading">Your tokens</h2>
${state.tokens.length === 0 ? html`<p class="muted">You have no personal tokens.</p>` : html`<div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${state.tokens.map((t) => {
    const status = tokenStatus(t, state.now);
    return html`<tr>
    <td class="strong">${t.name}</td>
    <td data-label="Scopes">${scopeList(t.scope).map((s) => html`<code>${s}</code> `)}</td>
    <td data-label="Created">${when(t.createdAt)}</td>
    <td data-label="Expires">${t.expiresAt === null ? 'never' : when(t.expiresAt)}</td>
    <td data-label="Last used">${when(t.lastUsedAt)}</td>
    <td data-label="Status">${status}</td>
    <td>${status === 'Active' ? html`<form method="post" action="/settings/tokens/revoke" class="inline">
      <input type="hidden" name="_csrf" value="${context.csrf}">
      <input type="hidden" name="token_id" value="${t.id}">
      <button type="submit" class="danger" aria-label="Revoke token ${t.name}">Revoke</button>
    </form>` : ''}</td>
  </tr>`;
  })}</tbody>
</table></div>`}
</section>`, { script: state.created ? 'copy' : undefined });
}

/** Revoking a personal token, asked first. */
export function revokeTokenConfirmation(token: PersonalToken): Confirmation {
  return {
    section: '/settings/tokens',
    title: `Revoke the token “${token.name}”?`,
    consequences: html`<p>Every script or tool that uses it gets <code>401</code> from its next request on. A revoked token cannot be turned back on; you would create a new one.</p>`,
    action: '/settings/tokens/revoke',
    fields: { token_id: String(token.id) },
    button: 'Revoke token',
    cancel: '/settings/tokens',
  };
}


// ---- Authorized applications ---------------------------------------------------------------

export function applicationsPage(context: PageContext, apps: AuthorizedApplication[], state: { notice?: string | undefined; error?: string | undefined }): Html {
  return settingsLayout('Authorized applications', context, '/settings/applications', html`<section class="card">
<h1>Authorized applications</h1>
<p>Apps you allowed to read your data. Revoking access ends every token the app holds for you at once; it must ask you again to get new ones.</p>
${notice(state.notice)}
${state.error ? html`<p class="alert" role="alert">${state.error}</p>` : ''}
${apps.length > 1 ? html`<form method="post" action="/settings/applications/revoke-all">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">Revoke access for all ${apps.length} applications…</button>
</form>` : ''}
</section>
${apps.length === 0 ? html`<p class="muted card">You have not authorized any applications.</p>` : apps.map((app) => html`<section class="card app" aria-labelledby="app-${app.client.clientId}">
  <h2 id="app-${app.client.clientId}">${app.client.name}</h2>
  ${app.client.homepageUrl ? html`<p><a href="${app.client.homepageUrl}" rel="noopener noreferrer">${app.client.homepageUrl}</a></p>` : ''}
  ${app.client.description ? html`<p>${app.client.description}</p>` : ''}
  ${app.scopes.length > 0 ? html`<p>It can read:</p>${scopeItems(app.scopes)}` : ''}
  <dl class="facts">
    <dt>First authorized</dt><dd>${when(app.firstAuthorizedAt)}</dd>
    <dt>Last used</dt><dd>${when(app.lastUsedAt)}</dd>
  </dl>
  <form method="post" action="/settings/applications/revoke">
    <input type="hidden" name="_csrf" value="${context.csrf}">
    <input type="hidden" name="client_id" value="${app.client.clientId}">
    <details class="ask-first">
      <summary class="button danger">Revoke access…</summary>
      <p><strong>${app.client.name}</strong> can no longer read your data: every token it holds for you stops working at once, and it is signed out of your account. To use it again you would authorize it anew.</p>
      <button type="submit" class="danger" aria-label="Revoke access for ${app.client.name}">Yes, revoke access</button>
    </details>
  </form>
</section>`)}`);
}

/** Withdrawing every app's access, asked first. */
export function revokeAllConfirmation(apps: AuthorizedApplication[]): Confirmation {
  return {
    section: '/settings/applications',
    title: 'Revoke access for every application?',
    consequences: html`<p>${apps.length === 1 ? 'This application' : `These ${apps.length} applications`} can no longer read your data; every token they hold for you stops working at once:</p>
<ul>${apps.map((a) => html`<li><strong>${a.client.name}</strong></li>`)}</ul>
<p>Each would have to ask you again.</p>`,
    action: '/settings/applications/revoke-all',
    fields: {},
    button: 'Revoke access for all',
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

/** The sign-out fields of the registration form and of an app's page (RP-Initiated and Back-Channel Logout). */
function logoutFields(values: { postLogoutRedirectUris: string; backchannelLogoutUri: string }, errors: FormErrors): Html {
  return html`<label for="post_logout_redirect_uris">Post-logout redirect URIs <span class="muted">(optional)</span></label>
  <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" ${control(errors, 'post_logout_redirect_uris', { hint: 'post-logout-hint' })}>${values.postLogoutRedirectUris}</textarea>
  ${fieldMessage(errors, 'post_logout_redirect_uris')}
  <p class="hint" id="post-logout-hint">Where <code>/oauth/logout</code> may send people back after signing them out. One per line, the same rules as redirect URIs; matched exactly.</p>
  <label for="backchannel_logout_uri">Back-channel logout URI <span class="muted">(optional)</span></label>
  <input type="url" id="backchannel_logout_uri" name="backchannel_logout_uri" value="${values.backchannelLogoutUri}" maxlength="2000" placeholder="https://example.com/backchannel-logout" ${control(errors, 'backchannel_logout_uri', { hint: 'backchannel-hint' })}>
  ${fieldMessage(errors, 'backchannel_logout_uri')}
  <p class="hint" id="backchannel-hint">We POST a signed <code>logout_token</code> here when someone who uses your app signs out or withdraws access. https (http on 127.0.0.1, [::1] or localhost for development); no #fragment. Answer 200 or 204.</p>`;
}

export function developersPage(context: PageContext, clients: Client[], state: { form?: ClientForm; errors?: FormErrors }): Html {
  const form = state.form ?? { name: '', description: '', homepage: '', redirectUris: '', type: 'confidential', postLogoutRedirectUris: '', backchannelLogoutUri: '' };
  const errors = state.errors;
  return settingsLayout('Developer applications', context, '/settings/developers', html`<section class="card">
<h1>Developer applications</h1>
<p>Register an app to let people sign in with their account and read their data through the <a href="/docs">API</a>.</p>
${clients.length === 0 ? html`<p class="muted">You have not registered any applications.</p>` : html`<ul class="app-list">${clients.map((c) => html`<li>
  <a href="/settings/developers/${c.clientId}">${c.name}</a> <span class="tag">${c.type}</span> ${c.status === 'deactivated' ? html`<span class="tag off">deactivated</span>` : ''}
</li>`)}</ul>`}
</section>
<section class="card" aria-labelledby="register-heading">
<h2 id="register-heading">Register an application</h2>
${errorSummary(errors)}
<form method="post" action="/settings/developers">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="name">Name</label>
  <input type="text" id="name" name="name" value="${form.name}" required maxlength="80" ${control(errors, 'name')}>
  ${fieldMessage(errors, 'name')}
  <label for="description">Description <span class="muted">(optional)</span></label>
  <textarea id="description" name="description" rows="3" maxlength="500" ${control(errors, 'description')}>${form.description}</textarea>
  ${fieldMessage(errors, 'description')}
  <label for="homepage">Homepage <span class="muted">(optional)</span></label>
  <input type="url" id="homepage" name="homepage" value="${form.homepage}" maxlength="2000" placeholder="https://example.com" ${control(errors, 'homepage')}>
  ${fieldMessage(errors, 'homepage')}
  <label for="redirect_uris">Redirect URIs</label>
  <textarea id="redirect_uris" name="redirect_uris" rows="3" required ${control(errors, 'redirect_uris', { hint: 'redirect-hint' })}>${form.redirectUris}</textarea>
  ${fieldMessage(errors, 'redirect_uris')}
  <p class="hint" id="redirect-hint">One per line. https, or http on 127.0.0.1, [::1] or localhost; no #fragment. Matched exactly.</p>
  <fieldset id="type" ${control(errors, 'type')}>
    <legend>Type</legend>
    ${fieldMessage(errors, 'type')}
    <div class="check"><input type="radio" id="type-confidential" name="type" value="confidential" ${form.type !== 'public' ? html`checked` : ''}>
      <label for="type-confidential">Confidential <span class="muted">— runs on a server that can keep a client secret</span></label></div>
    <div class="check"><input type="radio" id="type-public" name="type" value="public" ${form.type === 'public' ? html`checked` : ''}>
      <label for="type-public">Public <span class="muted">— a browser, mobile or command-line app; no secret, PKCE required</span></label></div>
  </fieldset>
  ${logoutFields(form, errors)}
  <div class="actions"><button type="submit">Register application</button></div>
</form>
</section>`);
}

export interface ClientPageState {
  secret?: string | undefined;
  notice?: string | undefined;
  errors?: FormErrors;
  redirectUris?: string | undefined;
  /** The sign-out form as sent, when it is shown again with an error. */
  logout?: { postLogoutRedirectUris: string; backchannelLogoutUri: string } | undefined;
  /** Where to sign in again, when the sign-in is too old for changing the app (`isRecentSignIn`). */
  signInAgain?: string | undefined;
}

export function clientPage(context: PageContext, client: Client, state: ClientPageState): Html {
  const active = client.status === 'active';
  const base = `/settings/developers/${client.clientId}`;
  const logoutErrors = errorsFor(state.errors, ...LOGOUT_FIELDS);
  const redirectErrors = errorsFor(state.errors, 'redirect_uris');
  const logout = state.logout ?? { postLogoutRedirectUris: client.postLogoutRedirectUris.join('\n'), backchannelLogoutUri: client.backchannelLogoutUri ?? '' };
  return settingsLayout(client.name, context, '/settings/developers', html`<section class="card">
<p><a href="/settings/developers">← Developer applications</a></p>
<h1>${client.name}</h1>
${notice(state.notice)}
${active && state.signInAgain ? html`<p class="notice" role="status">Changing this application needs a sign-in from the last 15 minutes. <a href="${state.signInAgain}">Sign in again</a> first.</p>` : ''}
${state.secret ? html`<div class="notice created" role="status">${shownOnce('client-secret', 'Client secret', state.secret)}</div>` : ''}
<dl class="facts">
  <dt>Client ID</dt><dd><input type="text" id="client-id" class="mono" value="${client.clientId}" readonly aria-label="Client ID"></dd>
  <dt>Type</dt><dd>${client.type}${client.type === 'public' ? ' (no secret; PKCE required)' : ''}</dd>
  <dt>Status</dt><dd>${active ? 'Active' : 'Deactivated'}</dd>
  ${client.homepageUrl ? html`<dt>Homepage</dt><dd><a href="${client.homepageUrl}" rel="noopener noreferrer">${client.homepageUrl}</a></dd>` : ''}
  ${client.description ? html`<dt>Description</dt><dd>${client.description}</dd>` : ''}
  <dt>Registered</dt><dd>${when(client.createdAt)}</dd>
</dl>
</section>
${active ? html`<section class="card" aria-labelledby="uris-heading">
<h2 id="uris-heading">Redirect URIs</h2>
${errorSummary(redirectErrors)}
<form method="post" action="${base}/redirect-uris">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label for="redirect_uris">Redirect URIs, one per line</label>
  <textarea id="redirect_uris" name="redirect_uris" rows="4" required ${control(redirectErrors, 'redirect_uris', { hint: 'redirect-hint' })}>${state.redirectUris ?? client.redirectUris.join('\n')}</textarea>
  ${fieldMessage(redirectErrors, 'redirect_uris')}
  <p class="hint" id="redirect-hint">https, or http on 127.0.0.1, [::1] or localhost; no #fragment. Matched exactly.</p>
  <div class="actions"><button type="submit">Save redirect URIs</button></div>
</form>
</section>
<section class="card" aria-labelledby="logout-heading">
<h2 id="logout-heading">Sign-out</h2>
<p>How your app takes part in signing out: see <a href="/docs#logout">Sign users out</a>.</p>
${errorSummary(logoutErrors)}
<form method="post" action="${base}/logout-uris">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${logoutFields(logout, logoutErrors)}
  <div class="actions"><button type="submit">Save sign-out settings</button></div>
</form>
</section>
<section class="card" aria-labelledby="par-heading">
<h2 id="par-heading">Pushed authorization requests</h2>
<p>Your app can push the parameters of each authorization request to <code>POST /api/oauth/par</code> first and send the browser with only the <code>request_uri</code> it gets back (RFC 9126): nobody can change them on the way. See <a href="/docs#par">Pushed authorization requests</a>.</p>
<form method="post" action="${base}/pushed-requests">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <label><input type="checkbox" name="require_pushed_authorization_requests" value="1" ${client.requirePushedAuthorizationRequests ? 'checked' : ''}> Require pushed authorization requests</label>
  <p class="hint">When ticked, an authorization request that was not pushed is refused.</p>
  <div class="actions"><button type="submit">Save</button></div>
</form>
</section>
${client.type === 'confidential' ? html`<section class="card" aria-labelledby="secret-heading">
<h2 id="secret-heading">Client secret</h2>
<p>Rotating makes a new secret; the old one stops working at once.</p>
<form method="post" action="${base}/rotate-secret">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="secondary">Rotate secret…</button>
</form>
</section>` : ''}
<section class="card" aria-labelledby="deactivate-heading">
<h2 id="deactivate-heading">Deactivate</h2>
<p>The app can no longer sign anyone in, and every token it holds ends at once. This cannot be undone here.</p>
<form method="post" action="${base}/deactivate">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <button type="submit" class="danger">Deactivate application…</button>
</form>
</section>` : html`<section class="card"><p>This application is deactivated: it cannot sign anyone in and its tokens no longer work.</p></section>`}`, { script: state.secret ? 'copy' : undefined });
}

/** Rotating a client secret, asked first: the old secret dies at once. */
export function rotateSecretConfirmation(client: Client): Confirmation {
  return {
    section: '/settings/developers',
    title: `Rotate the secret of ${client.name}?`,
    consequences: html`<p>A new secret is made and shown once. <strong>The current secret stops working at once</strong>: until your server uses the new one, its token requests fail with <code>invalid_client</code>.</p>`,
    action: `/settings/developers/${client.clientId}/rotate-secret`,
    fields: {},
    button: 'Rotate secret',
    cancel: `/settings/developers/${client.clientId}`,
  };
}

/** Deactivating an app, asked first. */
export function deactivateConfirmation(client: Client): Confirmation {
  return {
    section: '/settings/developers',
    title: `Deactivate ${client.name}?`,
    consequences: html`<p><strong>${client.name}</strong> can no longer sign anyone in, and every token it holds, for every user, stops working at once. A deactivated application cannot be turned back on here.</p>`,
    action: `/settings/developers/${client.clientId}/deactivate`,
    fields: {},
    button: 'Deactivate application',
    cancel: `/settings/developers/${client.clientId}`,
  };
}
