// Draws the OpenAPI document named by `#api-reference[data-openapi]` with Swagger UI, from this
// service's own copy (/static/swagger-ui/, the pinned swagger-ui-dist package): the page's
// Content-Security-Policy allows scripts and styles from this origin only, and Swagger UI needs
// nothing more (no eval, no inline style element). "Try it out" is off: the page is a reference,
// and a token belongs in your app, not in a web form.
(() => {
  'use strict';
  const root = document.getElementById('api-reference');
  if (!root) return;
  const style = document.createElement('link');
  style.rel = 'stylesheet';
  style.href = '/static/swagger-ui/swagger-ui.css';
  document.head.append(style);
  const bundle = document.createElement('script');
  bundle.src = '/static/swagger-ui/swagger-ui-bundle.js';
  bundle.addEventListener('load', () => {
    root.replaceChildren();
    // The reference is drawn in English: a screen reader reads it in an English voice.
    root.lang = 'en';
    window.SwaggerUIBundle({
      url: root.dataset.openapi,
      domNode: root,
      deepLinking: true,
      supportedSubmitMethods: [],
      validatorUrl: null,
      defaultModelsExpandDepth: 1,
      // With "Try it out" off, the Authorize dialog would collect a token for nothing.
      plugins: [() => ({ wrapComponents: { authorizeBtn: () => () => null } })],
    });
  });
  document.head.append(bundle);
})();
