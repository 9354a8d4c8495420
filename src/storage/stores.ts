/** Builds every store over one Kysely handle (a connection pool or a transaction). */
import type { Kysely } from 'kysely';
import type { Stores } from '../core/stores.js';
import { type CompiledQueries, inTransaction } from './database.js';
import type { Database } from './schema.js';
import { KyselyClientStore } from './repositories/clients.js';
import { KyselyCodeStore } from './repositories/codes.js';
import { KyselyConsentStore } from './repositories/consents.js';
import { KyselyDpopProofStore } from './repositories/dpop-proofs.js';
import { KyselyGrantStore } from './repositories/grants.js';
import { KyselyHousekeeping } from './repositories/housekeeping.js';
import { KyselyKeyStore } from './repositories/keys.js';
import { KyselyLeakedCredentialStore } from './repositories/leaked-credentials.js';
import { KyselyLogoutDeliveryStore } from './repositories/logout-deliveries.js';
import { KyselyOneTimeSecretStore } from './repositories/one-time-secrets.js';
import { KyselyPasskeyStore } from './repositories/passkeys.js';
import { KyselyPendingSignInStore } from './repositories/pending-sign-ins.js';
import { KyselyPersonalTokenStore } from './repositories/personal-tokens.js';
import { KyselyPostStore } from './repositories/posts.js';
import { KyselyPushedRequestStore } from './repositories/pushed-requests.js';
import { KyselySealedColumnStore } from './repositories/sealed-columns.js';
import { KyselySecondFactorStore } from './repositories/second-factors.js';
import { KyselySecurityEventStore } from './repositories/security-events.js';
import { KyselyServerSecretStore } from './repositories/server-secrets.js';
import { KyselySessionStore } from './repositories/sessions.js';
import { KyselyTokenStore } from './repositories/tokens.js';
import { KyselyUserStore } from './repositories/users.js';

/** `queries` are compiled once per database; its transactions' stores share them. */
export function createStores(db: Kysely<Database>, queries: CompiledQueries): Stores {
  return {
    users: new KyselyUserStore(db, queries),
    posts: new KyselyPostStore(db, queries),
    clients: new KyselyClientStore(db, queries),
    consents: new KyselyConsentStore(db, queries),
    grants: new KyselyGrantStore(db, queries),
    codes: new KyselyCodeStore(db, queries),
    tokens: new KyselyTokenStore(db, queries),
    personalTokens: new KyselyPersonalTokenStore(db, queries),
    keys: new KyselyKeyStore(db),
    sessions: new KyselySessionStore(db, queries),
    serverSecrets: new KyselyServerSecretStore(db),
    sealedColumns: new KyselySealedColumnStore(db),
    logoutDeliveries: new KyselyLogoutDeliveryStore(db),
    secondFactors: new KyselySecondFactorStore(db),
    passkeys: new KyselyPasskeyStore(db),
    pendingSignIns: new KyselyPendingSignInStore(db),
    securityEvents: new KyselySecurityEventStore(db),
    pushedRequests: new KyselyPushedRequestStore(db),
    leakedCredentials: new KyselyLeakedCredentialStore(db),
    dpopProofs: new KyselyDpopProofStore(db, queries),
    oneTimeSecrets: new KyselyOneTimeSecretStore(db),
    housekeeping: new KyselyHousekeeping(db),
    transaction: (work) => inTransaction(db, (trx) => work(createStores(trx, queries))),
  };
}
