/**
 * Back-channel logout tokens POSTed to an app's registered `backchannel_logout_uri` (OpenID
 * Back-Channel Logout 1.0 section 2.5), through the one guarded outbound request
 * (guarded-request.ts: checked addresses, no redirects, a timeout). The answer is read up to
 * 16 KiB and then dropped; only its status counts.
 */
import type { LogoutTokenSender, SendOutcome } from '../core/oidc/logout/delivery.js';
import { guardedRequest } from './guarded-request.js';
import { NameResolver } from './name-resolver.js';

/** The most of an answer's body that is read; the rest is dropped with the connection. */
const ANSWER_LIMIT_BYTES = 16 * 1024;

export interface LogoutSenderOptions {
  /** Send to private, loopback and other non-public addresses too (BACKCHANNEL_ALLOW_PRIVATE, development). */
  allowPrivateAddresses: boolean;
  /** An attempt without a whole answer by then has failed. */
  timeoutMs: number;
}

export class HttpLogoutSender implements LogoutTokenSender {
  private readonly names = new NameResolver();

  constructor(private readonly options: LogoutSenderOptions) {}

  async send(uri: string, logoutToken: string): Promise<SendOutcome> {
    const answer = await guardedRequest(uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `logout_token=${encodeURIComponent(logoutToken)}`,
    }, {
      allowPrivateAddresses: this.options.allowPrivateAddresses,
      allowSetting: 'BACKCHANNEL_ALLOW_PRIVATE',
      timeoutMs: this.options.timeoutMs,
      maxBodyBytes: ANSWER_LIMIT_BYTES,
      oversize: 'drop',
      userAgent: 'svc-backchannel-logout/1',
      names: this.names,
    });
    if (!answer.ok) return { delivered: false, error: answer.error };
    if (answer.status === 200 || answer.status === 204) return { delivered: true };
    return { delivered: false, error: answer.status >= 300 && answer.status < 400 ? `answered HTTP ${answer.status}; redirects are not followed` : `answered HTTP ${answer.status}` };
  }
}
