/** A browser stand-in for HTTP tests: keeps cookies, reads the CSRF token, posts forms. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/core/accounts/accounts.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { TestApp } from '../support/app.js';

export interface PageResponse {
  status: number;
  location: string | null;
  headers: Headers;
  text: string;
}

export type Fields = Record<string, string | string[]>;

export class Visitor {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The `Cookie` header of the cookies kept, for a request sent by other means (none when there are none). */
  cookieHeader(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async request(path: string, init: RequestInit = {}): Promise<PageResponse> {
    const response = await fetch(this.baseUrl + path, {
      ...init,
      redirect: 'manual',
      headers: { ...this.cookieHeader(), ...(init.headers as Record<string, string> | undefined) },
    });
    this.remember(response);
    return { status: response.status, location: response.headers.get('location'), headers: response.headers, text: await response.text() };
  }

  get(path: string): Promise<PageResponse> {
    return this.request(path);
  }

  /** The CSRF token this browser holds, fetched from a page when it has none yet. */
  async csrf(): Promise<string> {
    if (!this.cookies.has('svc_csrf')) await this.get('/login');
    const token = this.cookies.get('svc_csrf');
    assert.ok(token, 'a CSRF cookie was set');
    return token;
  }

  /**
   * Posts a url-encoded form. The CSRF token is added unless `csrf` says otherwise: `null` sends
   * none, a string sends that value instead (a forged token).
   */
  async post(path: string, fields: Fields, options: { csrf?: string | null } = {}): Promise<PageResponse> {
    const body = new URLSearchParams();
    const csrf = options.csrf === undefined ? await this.csrf() : options.csrf;
    if (csrf !== null) body.append('_csrf', csrf);
    for (const [key, value] of Object.entries(fields)) {
      for (const v of Array.isArray(value) ? value : [value]) body.append(key, v);
    }
    return this.request(path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  async signIn(username: string, password: string): Promise<void> {
    const response = await this.post('/login', { username, password, return_to: '/' });
    assert.equal(response.status, 303, 'signed in');
  }
}

/** The value of the read-only field with this id on a page (a token or secret shown once). */
export function readOnlyField(text: string, id: string): string | undefined {
  return new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(text)?.[1];
}

/** A browser at an address of its own (TRUST_PROXY=1): the per-address limits of one test leave the others alone, and views count by address. */
export class AddressedVisitor extends Visitor {
  constructor(baseUrl: string, readonly address = `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]! || 1}`) {
    super(baseUrl);
  }

  override request(path: string, init: RequestInit = {}): Promise<PageResponse> {
    return super.request(path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), 'x-forwarded-for': this.address } });
  }
}

/** A new account, signed in from a Visitor of its own: where most site tests begin. */
export async function signedInMember(t: TestApp, username: string, password: string): Promise<{ user: User; visitor: Visitor }> {
  const user = await createAccount(t.deps.stores, t.clock, { username, password });
  const visitor = new Visitor(t.baseUrl);
  await visitor.signIn(user.username, password);
  return { user, visitor };
}
