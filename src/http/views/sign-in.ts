import { html } from './html.js';
import { type PageContext, layout } from './layout.js';

export function signInPage(context: PageContext, form: { username: string; returnTo: string; error?: string | undefined; reauthenticate?: boolean }) {
  return layout('Sign in', context, html`<section class="card narrow">
<h1>Sign in</h1>
${form.error ? html`<p class="alert" role="alert">${form.error}</p>` : ''}
${form.reauthenticate ? html`<p class="notice">The application asked you to sign in again before it continues.</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  <label for="username">Username</label>
  <input type="text" id="username" name="username" value="${form.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" ${form.username ? '' : html`autofocus`}>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="256" ${form.username ? html`autofocus` : ''}>
  <div class="actions"><button type="submit">Sign in</button></div>
</form>
<form method="post" action="/login/passkey" class="passkey-sign-in">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  <input type="hidden" name="return_to" value="${form.returnTo}">
  <input type="hidden" name="credential" data-webauthn-result>
  <div class="actions"><button type="button" class="secondary" data-webauthn="get" data-options="/login/passkey/options" hidden>Sign in with a passkey</button></div>
  <p class="hint" role="status" data-webauthn-status></p>
</form>
<p class="muted">No account yet? <a href="/signup">Create one</a>.</p>
</section>`, { script: 'webauthn' });
}
