// Copy and Print buttons beside a secret shown once (a new personal token, a client secret,
// recovery codes). Served as a file because the Content-Security-Policy forbids inline script. A
// button `data-copy="ID"` copies the value of the field with that id (or the text of a list); its
// `data-copied-label` and `data-copy-failed` say how it went in the page's language. A button
// `data-print` prints the page. Without JavaScript the buttons stay hidden and the codes can be
// selected and copied by hand.
(() => {
  'use strict';
  for (const button of document.querySelectorAll('button[data-print]')) {
    button.hidden = false;
    button.addEventListener('click', () => window.print());
  }
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const field = document.getElementById(button.getAttribute('data-copy'));
    if (!field) continue;
    const text = () => ('value' in field ? field.value : [...field.querySelectorAll('li')].map((li) => li.textContent).join('\n'));
    const hint = document.getElementById(`${field.id}-hint`);
    button.hidden = false;
    button.addEventListener('click', async () => {
      let copied = false;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(text());
          copied = true;
        }
      } catch {
        copied = false;
      }
      if (!copied && 'select' in field) {
        // Older browsers, or http on a host that is not localhost: the selection and execCommand.
        field.focus();
        field.select();
        try { copied = document.execCommand('copy'); } catch { copied = false; }
      }
      button.textContent = copied ? button.dataset.copiedLabel : button.dataset.copyFailed;
      if (copied && hint && hint.dataset.copied) {
        hint.textContent = hint.dataset.copied;
        hint.setAttribute('role', 'status');
      }
    });
  }
})();
