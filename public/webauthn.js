// Passkeys (W3C Web Authentication): the site's one script, served as a file because the
// Content-Security-Policy forbids inline script. A button `data-webauthn="create"` or `"get"`
// asks the server for options (POST to `data-options` with the form's CSRF token), calls
// navigator.credentials, puts the result as JSON in the form's `credential` field and submits
// the form. Without JavaScript or WebAuthn the buttons stay hidden and every other form works.
(() => {
  'use strict';
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  const toBytes = (base64url) => {
    const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  };
  const toBase64url = (buffer) => {
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const descriptors = (list) => (list || []).map((d) => ({ ...d, id: toBytes(d.id) }));

  const creationOptions = (json) => ({
    ...json,
    challenge: toBytes(json.challenge),
    user: { ...json.user, id: toBytes(json.user.id) },
    excludeCredentials: descriptors(json.excludeCredentials),
  });
  const requestOptions = (json) => ({
    ...json,
    challenge: toBytes(json.challenge),
    allowCredentials: descriptors(json.allowCredentials),
  });

  /** The credential as the JSON the server reads (WebAuthn Level 3 `toJSON()`), built by hand for older browsers. */
  const credentialJson = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: toBase64url(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toBase64url(r.attestationObject);
      response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
    } else {
      response.authenticatorData = toBase64url(r.authenticatorData);
      response.signature = toBase64url(r.signature);
      if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
    }
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response,
    };
  };

  // A passkey the site no longer knows (removed, or its account deleted): the browser's passkey
  // manager is asked to forget it (WebAuthn Level 3 signalUnknownCredential, where there is one),
  // so it is not offered again.
  for (const form of document.querySelectorAll('form[data-unknown-credential]')) {
    if (typeof PublicKeyCredential.signalUnknownCredential !== 'function') break;
    PublicKeyCredential.signalUnknownCredential({ rpId: window.location.hostname, credentialId: form.dataset.unknownCredential })
      .catch((error) => console.warn('passkey not forgotten:', error));
  }

  // The account's passkeys as the site holds them now (the security page, signed in): the
  // browser's passkey manager drops any other of this account's, removed here or from another
  // device (WebAuthn Level 3 signalAllAcceptedCredentials, where there is one). Ids are base64url:
  // no spaces.
  const accepted = document.querySelector('[data-accepted-credentials]');
  if (accepted && typeof PublicKeyCredential.signalAllAcceptedCredentials === 'function') {
    PublicKeyCredential.signalAllAcceptedCredentials({
      rpId: accepted.dataset.rpId,
      userId: accepted.dataset.userId,
      allAcceptedCredentialIds: accepted.dataset.acceptedCredentials.split(' ').filter((id) => id !== ''),
    }).catch((error) => console.warn('passkeys not told:', error));
  }

  for (const button of document.querySelectorAll('button[data-webauthn]')) {
    const form = button.form;
    const status = form.querySelector('[data-webauthn-status]');
    // The page gives the words in its language (`data-waiting`, …); English when it has none.
    const say = (name, english) => { if (status) status.textContent = status.dataset[name] || english; };
    // The new passkey's name: sent with the options request, so a name the server would refuse is
    // told before the device makes a passkey, in the server's words for the form.
    const nameField = button.dataset.webauthn === 'create' ? form.elements.namedItem('name') : null;
    if (nameField) nameField.addEventListener('input', () => nameField.setCustomValidity(''));
    button.hidden = false;
    // Enter in the form's text field (the new passkey's name) submits it with no passkey: start the ceremony instead.
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!button.disabled) button.click();
    });
    // The name stays as sent while the device makes the passkey: one changed under the prompt to a
    // name the server refuses would be checked only after the device made a passkey.
    const busy = (on) => {
      button.disabled = on;
      if (nameField) nameField.readOnly = on;
    };
    button.addEventListener('click', async () => {
      if (!form.reportValidity()) return;
      busy(true);
      say('waiting', 'Waiting for your passkey…');
      try {
        const answer = await fetch(button.dataset.options, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(nameField ? { _csrf: form.elements._csrf.value, name: nameField.value } : { _csrf: form.elements._csrf.value }),
        });
        if (!answer.ok) {
          // The service asks for a fresh sign-in first (a recent one is needed to add a passkey).
          const refusal = await answer.json().catch(() => ({}));
          if (nameField && refusal.field === 'name' && typeof refusal.error_description === 'string') {
            // The name is refused: mended and sent again, it is asked about again.
            nameField.setCustomValidity(refusal.error_description);
            if (status) status.textContent = refusal.error_description;
            form.reportValidity();
            nameField.focus();
            busy(false);
            return;
          }
          if (refusal.field === 'passkey' && typeof refusal.error_description === 'string') {
            // No passkey can be added now (the account has the most it may): said before the device makes one.
            if (status) status.textContent = refusal.error_description;
            busy(false);
            return;
          }
          if (typeof refusal.location === 'string' && refusal.location.startsWith('/')) {
            window.location.assign(refusal.location);
            return;
          }
          if (answer.status === 403) {
            // The form's CSRF token is no longer the browser's (a sign-in in another tab made a new one): trying again cannot help.
            say('reload', 'This page has expired. Reload it and try again.');
            busy(false);
            return;
          }
          if (answer.status === 401) {
            say('expired', 'Your sign-in expired. Start again.');
            busy(false);
            return;
          }
          throw new Error(`the server answered ${answer.status}`);
        }
        const options = await answer.json();
        const credential = button.dataset.webauthn === 'create'
          ? await navigator.credentials.create({ publicKey: creationOptions(options) })
          : await navigator.credentials.get({ publicKey: requestOptions(options) });
        if (!credential) throw new Error('no passkey was chosen');
        form.querySelector('[data-webauthn-result]').value = JSON.stringify(credentialJson(credential));
        say('checking', 'Checking…');
        form.submit();
      } catch (error) {
        // The browser's reason is in the browser's language, often not the page's: for developers only.
        console.warn('passkey not used:', error);
        say('failed', 'The passkey was not used. You can try again.');
        busy(false);
      }
    });
  }
})();
