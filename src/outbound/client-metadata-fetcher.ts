/**
 * Client ID metadata documents fetched from the URL an app gives as its `client_id`
 * (draft-ietf-oauth-client-id-metadata-document 4), through the one guarded outbound request
 * (guarded-request.ts): checked addresses, no redirects followed, at most 5 KB, 5 seconds.
 */
import { type ClientMetadataFetcher, DOCUMENT_FETCH_TIMEOUT_MS, DOCUMENT_MAX_BYTES, type FetchedDocument } from '../core/oauth/client-metadata.js';
import { guardedRequest } from './guarded-request.js';
import { NameResolver } from './name-resolver.js';

export class HttpClientMetadataFetcher implements ClientMetadataFetcher {
  private readonly names = new NameResolver();

  /** `allowPrivateAddresses`: CLIENT_METADATA_ALLOW_PRIVATE (development). */
  constructor(private readonly allowPrivateAddresses: boolean) {}

  async fetch(url: string): Promise<FetchedDocument> {
    const answer = await guardedRequest(url, { method: 'GET', headers: { accept: 'application/json' } }, {
      allowPrivateAddresses: this.allowPrivateAddresses,
      allowSetting: 'CLIENT_METADATA_ALLOW_PRIVATE',
      timeoutMs: DOCUMENT_FETCH_TIMEOUT_MS,
      maxBodyBytes: DOCUMENT_MAX_BYTES,
      oversize: 'fail',
      userAgent: 'svc-client-metadata/1',
      names: this.names,
    });
    if (!answer.ok) return answer;
    const cacheControl = answer.headers['cache-control'];
    return { ok: true, status: answer.status, cacheControl, body: answer.body };
  }
}
