/**
 * Drives the authorization code flow over HTTP as a browser and an app would, with nothing but
 * the contract of INTERFACE section 10: the sign-in form (`username`, `password`, the hidden
 * fields) and the consent form (its hidden fields and `decision=approve|deny`). Used by the
 * cross-instance test, the soak and the benchmark.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A browser's cookies for one site (cookies ignore ports, so instances share them). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0|expires=Thu, 01 Jan 1970/i.test(header) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export async function browse(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header();
  if (cookie !== '') headers.set('cookie', cookie);
  const response = await fetch(url, { ...init, redirect: 'manual', headers });
  jar.store(response);
  return response;
}

/** The hidden inputs of the first form posting to `action`, plus the form's own fields. */
export function formFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*action="${action.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`no form posting to ${action} in the page`);
  const fields: Record<string, string> = {};
  for (const input of form[1]!.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name) fields[name] = value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return fields;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function signIn(jar: CookieJar, base: string, username: string, password: string): Promise<void> {
  const page = await browse(jar, `${base}/login`);
  const fields = formFields(await page.text(), '/login');
  const response = await browse(jar, `${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, username, password }),
  });
  if (response.status !== 303) throw new Error(`sign-in failed with ${response.status}`);
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  scope: string;
  state?: string;
  codeChallenge?: string;
  nonce?: string;
  extra?: Record<string, string>;
}

/**
 * Follows the authorization request through sign-in (when `credentials` are given) and consent
 * (approving it) on `base`, until the redirect back to the app; returns that redirect's parameters.
 * `consentBase` lets the consent form be posted to another instance.
 */
export async function authorize(jar: CookieJar, base: string, request: AuthorizeRequest, options: {
  credentials?: { username: string; password: string };
  decision?: 'approve' | 'deny';
  consentBase?: string;
} = {}): Promise<URLSearchParams> {
  const query = new URLSearchParams({
    response_type: 'code', client_id: request.clientId, redirect_uri: request.redirectUri, scope: request.scope,
    state: request.state ?? randomBytes(8).toString('hex'),
    ...(request.codeChallenge ? { code_challenge: request.codeChallenge, code_challenge_method: 'S256' } : {}),
    ...(request.nonce ? { nonce: request.nonce } : {}),
    ...request.extra,
  });
  let url = `${base}/oauth/authorize?${query}`;
  for (let step = 0; step < 6; step++) {
    const response = await browse(jar, url);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, base);
      if (target.href.startsWith(request.redirectUri.split('?')[0]!) || target.searchParams.has('code') || target.searchParams.has('error')) {
        if (!target.pathname.startsWith('/login')) return target.searchParams;
      }
      if (target.pathname === '/login') {
        if (!options.credentials) throw new Error('sign-in required but no credentials given');
        const page = await browse(jar, target.href);
        const fields = formFields(await page.text(), '/login');
        const signedIn = await browse(jar, `${base}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ ...fields, username: options.credentials.username, password: options.credentials.password }),
        });
        if (signedIn.status !== 303) throw new Error(`sign-in failed with ${signedIn.status}`);
        url = new URL(signedIn.headers.get('location')!, base).href;
        continue;
      }
      url = target.href;
      continue;
    }
    if (response.status === 200) {
      const fields = formFields(await response.text(), '/oauth/authorize');
      const consent = await browse(jar, `${options.consentBase ?? base}/oauth/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, decision: options.decision ?? 'approve' }),
      });
      const back = consent.headers.get('location');
      if (!back) throw new Error(`consent answered ${consent.status} without a redirect`);
      return new URL(back).searchParams;
    }
    throw new Error(`authorization answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  throw new Error('too many redirects');
}

export async function tokenRequest(base: string, form: Record<string, string>, basic?: { id: string; secret: string }): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`;
  }
  const response = await fetch(`${base}/api/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(form) });
  return { status: response.status, body: await response.json() };
}
