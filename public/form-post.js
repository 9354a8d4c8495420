// Posts a form_post authorization response to the app as the page loads (OAuth 2.0 Form Post
// Response Mode 2). Served as a file because the Content-Security-Policy forbids inline script;
// without JavaScript the page's Continue button sends the same form.
(() => {
  'use strict';
  const form = document.getElementById('authorization-response');
  if (form) form.submit();
})();
