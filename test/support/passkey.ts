/**
 * A software authenticator for HTTP tests: one P-256 passkey that answers WebAuthn registration
 * (attestation `none`) and authentication ceremonies as a browser would send them (W3C WebAuthn
 * Level 3, 6.1 authenticator data and 6.5.4 `none` attestation), without a browser.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import assert from 'node:assert/strict';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { Browser } from '../oauth/helpers.js';
import type { TestApp } from './app.js';

const FLAGS_UP_UV = 0x01 | 0x04;
const FLAG_AT = 0x40;

export class SoftwarePasskey {
  readonly credentialId = randomBytes(16).toString('base64url');
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private counter = 0;

  /**
   * `origin` is BASE_URL's; its host name is the relying party id. `counts: false` is a passkey
   * that keeps no signature counter (it always says 0, as synced passkeys do: WebAuthn 6.1.1), so
   * only the challenge tells a replay.
   */
  constructor(private readonly origin: string, private readonly userHandle = randomBytes(16).toString('base64url'), private readonly counts = true) {}

  /** The COSE_Key of the public key (RFC 9053 7.1.1: EC2, P-256, ES256). */
  private cosePublicKey(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')],
    ]));
  }

  private authenticatorData(withCredential: boolean): Buffer {
    const rpIdHash = createHash('sha256').update(new URL(this.origin).hostname).digest();
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counts ? ++this.counter : 0);
    const head = Buffer.concat([rpIdHash, Buffer.from([FLAGS_UP_UV | (withCredential ? FLAG_AT : 0)]), counter]);
    if (!withCredential) return head;
    const id = Buffer.from(this.credentialId, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(id.length);
    return Buffer.concat([head, Buffer.alloc(16), length, id, this.cosePublicKey()]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** The JSON a browser posts after `navigator.credentials.create()` with these options. */
  register(options: { challenge: string }): string {
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', this.authenticatorData(true)]]) as never);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    });
  }

  /** The JSON a browser posts after `navigator.credentials.get()`; `forge` spoils the signature. */
  assert(options: { challenge: string }, forge = false): string {
    const authenticatorData = this.authenticatorData(false);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]);
    const signature = sign('sha256', forge ? Buffer.concat([signed, Buffer.from([0])]) : signed, this.keys.privateKey);
    return JSON.stringify({
      id: this.credentialId, rawId: this.credentialId, type: 'public-key', clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: this.userHandle,
      },
    });
  }
}

const csrfOf = (browser: Browser) => browser.cookies.get('svc_csrf')!;

/** Registers a software passkey through /settings/security, as the page's script does. */
export async function addPasskey(t: TestApp, browser: Browser, kind: { counts?: boolean; name?: string } = {}): Promise<SoftwarePasskey> {
  const passkey = new SoftwarePasskey(t.baseUrl, undefined, kind.counts ?? true);
  const options = await (await browser.postForm('/settings/security/passkeys/options', { _csrf: csrfOf(browser) })).json() as { challenge: string };
  const added = await browser.postForm('/settings/security', { _csrf: csrfOf(browser), action: 'passkey-add', name: kind.name ?? 'Laptop', credential: passkey.register(options) });
  assert.equal(added.status, 303, 'the passkey is added');
  return passkey;
}

/** Asks /login for a sign-in challenge and answers it with `passkey` (`forge` spoils the signature); the answer and the response sent. */
export async function passkeyAlone(browser: Browser, passkey: SoftwarePasskey, forge = false): Promise<Response & { credential: string }> {
  await browser.fetch('/login');
  const options = await (await browser.postForm('/login/passkey/options', { _csrf: csrfOf(browser) })).json() as { challenge: string };
  const credential = passkey.assert(options, forge);
  return Object.assign(await browser.postForm('/login/passkey', { _csrf: csrfOf(browser), return_to: '/', credential }), { credential });
}
