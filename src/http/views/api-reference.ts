/**
 * /docs/api: the read API's OpenAPI document drawn by Swagger UI (swagger-ui-dist, served from
 * /static/swagger-ui/ by this service, so the page's Content-Security-Policy needs no other origin
 * and no loosening). public/api-reference.js draws it; without script the page says where the same
 * endpoints are described in words.
 */
import { API_BASE_PATH } from '../../core/api/views.js';
import { type Html, html } from './html.js';
import { type PageContext, layout } from './layout.js';
import { rich } from './words.js';

export const OPENAPI_PATH = `${API_BASE_PATH}/openapi.json`;

export function apiReferencePage(context: PageContext): Html {
  const { t } = context;
  const link = (href: string) => (chunks: Array<string | Html>) => html`<a href="${href}">${chunks}</a>`;
  return layout(t.text('docs.apiReference'), context, html`<article class="api-reference">
<h1>${t.text('docs.apiReference')}</h1>
<p>${rich(t, 'docs.apiReferenceIntro', { openapi: link(OPENAPI_PATH), docs: link('/docs#endpoints') })}</p>
${t.locale === 'en' ? '' : html`<p class="notice">${t.text('docs.englishOnly')}</p>`}
<div id="api-reference" data-openapi="${OPENAPI_PATH}">
<p class="notice">${rich(t, 'docs.apiReferenceNoScript', { docs: link('/docs#endpoints') })}</p>
</div>
</article>`, { script: 'api-reference' });
}
