/** What the token rules need from outside: storage, clock, lifetimes, two counters and the audit log. */
import type { AuditSink } from '../../audit.js';
import type { ClientMetadataDocuments } from '../client-metadata.js';
import type { DpopVerifier } from '../dpop/verifier.js';
import type { SharedKeys } from '../../credentials/shared-keys.js';
import type { TokenMarks } from '../../credentials/token-marks.js';
import type { KeyRing } from '../../oidc/key-ring.js';
import type { Stores } from '../../stores.js';
import type { SecurityLog } from '../../accounts/security-log.js';
import type { Clock } from '../../time.js';

/** A counter as the core sees it (prom-client's `Counter` fits). */
export interface CounterPort<L extends string> {
  inc(labels: Partial<Record<L, string>>, value?: number): void;
}

export interface OAuthDeps {
  readonly stores: Stores;
  readonly clock: Clock;
  /** Signs id_tokens when `openid` was granted. */
  readonly keys: KeyRing;
  readonly settings: {
    readonly baseUrl: string;
    /** SITE_TIME_ZONE: the id_token's `zoneinfo` for a member who chose no zone. */
    readonly siteTimeZone: string;
    readonly accessTokenTtlSeconds: number;
    readonly refreshTokenTtlSeconds: number;
    /** REFRESH_REPLAY_SECONDS: the replay window of a rotated refresh token (`src/core/oauth/tokens/replay.ts`). */
    readonly refreshReplaySeconds: number;
    readonly codeTtlSeconds: number;
  };
  readonly metrics: {
    readonly tokensIssued: CounterPort<'kind'>;
    readonly tokensRevoked: CounterPort<'reason'>;
  };
  /** Approvals on the consent page go to the account's security log. */
  readonly securityLog: SecurityLog;
  readonly audit: AuditSink;
  /** Checks DPoP proofs (RFC 9449) at the token endpoint. */
  readonly dpop: DpopVerifier;
  /** The keys of the pushed requests' markers (src/core/oauth/authorize/pushed.ts). */
  readonly sharedKeys: SharedKeys;
  /** Marks every access token issued as the service's (`src/core/credentials/token-marks.ts`). */
  readonly tokenMarks: TokenMarks;
  /** The apps that client ID metadata documents describe (INTERFACE section 13). */
  readonly clientDocuments: ClientMetadataDocuments;
}
