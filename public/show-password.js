// "Show password" on the sign-up page: a checkbox `data-show-password="ID"` shows the password
// field with that id as text while ticked. Served as a file because the Content-Security-Policy
// forbids inline script; without JavaScript the checkbox stays hidden and the form works as is.
(() => {
  'use strict';
  for (const box of document.querySelectorAll('input[type=checkbox][data-show-password]')) {
    const field = document.getElementById(box.getAttribute('data-show-password'));
    if (!field) continue;
    box.closest('[hidden]')?.removeAttribute('hidden');
    box.addEventListener('change', () => { field.type = box.checked ? 'text' : 'password'; });
    // The browser must never save or send the form with the field left as text.
    box.form?.addEventListener('submit', () => { field.type = 'password'; });
  }
})();
