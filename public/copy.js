// Copy buttons beside a secret shown once (a new personal token, a client secret). Served as a
// file because the Content-Security-Policy forbids inline script. A button `data-copy="ID"`
// copies the value of the field with that id; without JavaScript the buttons stay hidden and
// the read-only field can be selected and copied by hand.
(() => {
  'use strict';
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const field = document.getElementById(button.getAttribute('data-copy'));
    if (!field) continue;
    const hint = document.getElementById(`${field.id}-hint`);
    button.hidden = false;
    button.addEventListener('click', async () => {
      let copied = false;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(field.value);
          copied = true;
        }
      } catch {
        copied = false;
      }
      if (!copied) {
        // Older browsers, or http on a host that is not localhost: the selection and execCommand.
        field.focus();
        field.select();
        try { copied = document.execCommand('copy'); } catch { copied = false; }
      }
      button.textContent = copied ? 'Copied' : 'Press Ctrl+C to copy';
      if (copied && hint && hint.dataset.copied) {
        hint.textContent = hint.dataset.copied;
        hint.setAttribute('role', 'status');
      }
    });
  }
})();
