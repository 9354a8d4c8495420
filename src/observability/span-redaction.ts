/**
 * The last look at every span before it is exported: whatever an instrumentation recorded, no
 * query string and no header leaves the process. A query string carries the authorization
 * request's `state` and PKCE challenge, the `code` at a client's callback, a reset or
 * verification link's token, and whatever a client puts there (an access token in any
 * parameter); headers carry cookies and `Authorization`; the userinfo of a request line in
 * absolute form (`http://user:password@host/…`), a password. The URL's path and the route stay:
 * they say which endpoint answered.
 */
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { withoutUserinfo } from './request-target.js';

/** Attributes holding a URL or a path that may end in a query (HTTP's old and stable conventions, Fastify's `url.path`). */
const URL_ATTRIBUTES = new Set(['url.full', 'url.path', 'url.original', 'http.url', 'http.target']);

/** Attributes dropped whole: the query itself, and any header an instrumentation was told to copy. */
function dropped(key: string): boolean {
  return key === 'url.query' || key.startsWith('http.request.header.') || key.startsWith('http.response.header.')
    || /cookie|authorization/i.test(key);
}

/** `attributes` without queries nor userinfo in URLs nor dropped keys, changed in place: the span has ended and goes nowhere else. */
function redact(attributes: Record<string, unknown>): void {
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (dropped(key)) delete attributes[key];
    else if (URL_ATTRIBUTES.has(key) && typeof value === 'string') {
      const url = withoutUserinfo(value);
      attributes[key] = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    }
  }
}

/** `exporter`, handed each batch of spans once redacted, attributes and events' attributes alike. */
export function redactingExporter(exporter: SpanExporter): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
      for (const span of spans) {
        redact(span.attributes as Record<string, unknown>);
        for (const event of span.events) if (event.attributes) redact(event.attributes as Record<string, unknown>);
      }
      exporter.export(spans, done);
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
