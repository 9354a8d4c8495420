/**
 * A request target as sent, read before or without the router, and without what it must not
 * carry into a log line or a span: the HTTP layer, the log and the spans read it alike.
 */

/** The scheme and authority of a request target in absolute form (RFC 9112 3.2.2), a URL or not. */
export const ABSOLUTE_FORM_AUTHORITY = /^[A-Za-z][A-Za-z\d+.-]*:\/\/[^/?#]*/;

/**
 * An absolute-form target with its userinfo (`user:password@`, RFC 9110 4.2.4 deprecates it)
 * redacted: Node accepts it and the router routes by the path, and a client talking to the
 * service as to a proxy with its credentials in the URL left them in every request's line.
 */
export function withoutUserinfo(url: string): string {
  const authority = ABSOLUTE_FORM_AUTHORITY.exec(url)?.[0];
  if (authority === undefined) return url;
  const start = authority.indexOf('://') + 3;
  // A URL's userinfo ends at its authority's last `@`. A target that is no URL may hold a raw `/`,
  // `?` or `#` in its password (`http://u:pa/ss@h/…`), where the authority seems to end before it:
  // everything up to its last `@` is redacted then (attack108).
  const at = URL.canParse(url) ? authority.lastIndexOf('@') : url.lastIndexOf('@');
  if (at < start) return url;
  return `${url.slice(0, start)}[redacted]${url.slice(at)}`;
}
