// Copy buttons, served as a file because the Content-Security-Policy forbids inline script.
// Without JavaScript no button shows, and everything can be selected and copied by hand.
// - A button `data-copy="ID"` (beside a secret shown once, a client id) copies the value of the
//   field with that id (or the text of a list); `data-copied-label` and `data-copy-failed` say how
//   it went in the page's language. A button `data-print` prints the page.
// - Every `pre` inside a `[data-copy-code]` element (the developer docs) gets a Copy button, made
//   here, labelled by that element's `data-copy-label`, `data-copied-label` and `data-copy-failed`.
(() => {
  'use strict';

  /** One polite live region for the page, so a screen reader hears "Copied" too. */
  let status;
  function announce(text) {
    if (!status) {
      status = document.createElement('p');
      status.className = 'visually-hidden';
      status.setAttribute('role', 'status');
      document.body.append(status);
    }
    status.textContent = '';
    // A new text node after clearing: announced again on a second copy of the same block.
    setTimeout(() => { status.textContent = text; }, 50);
  }

  /** Copies `text`; falls back to selecting `element` and execCommand (older browsers, http off localhost). */
  async function copy(text, element) {
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        return true;
      }
    } catch {
      // Refused (no permission): try the selection below.
    }
    if ('select' in element) {
      element.focus();
      element.select();
    } else {
      const range = document.createRange();
      range.selectNodeContents(element);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    try { return document.execCommand('copy'); } catch { return false; }
  }

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
      const copied = await copy(text(), field);
      button.textContent = copied ? button.dataset.copiedLabel : button.dataset.copyFailed;
      if (copied && hint && hint.dataset.copied) {
        hint.textContent = hint.dataset.copied;
        hint.setAttribute('role', 'status');
      } else {
        announce(button.textContent);
      }
    });
  }

  for (const container of document.querySelectorAll('[data-copy-code]')) {
    const { copyLabel, copiedLabel, copyFailed } = container.dataset;
    for (const pre of container.querySelectorAll('pre')) {
      const block = document.createElement('div');
      block.className = 'code-block';
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary copy-code';
      button.textContent = copyLabel;
      pre.before(block);
      block.append(button, pre);
      let reset;
      button.addEventListener('click', async () => {
        const copied = await copy(pre.textContent, pre);
        button.textContent = copied ? copiedLabel : copyFailed;
        button.classList.toggle('copied', copied);
        announce(button.textContent);
        clearTimeout(reset);
        reset = setTimeout(() => {
          button.textContent = copyLabel;
          button.classList.remove('copied');
        }, 2500);
      });
    }
  }
})();
