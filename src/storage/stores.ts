/** Builds every store over one Kysely handle (a connection pool or a transaction). */
import type { Kysely } from 'kysely';
import type { Stores } from '../core/stores.js';
import type { CompiledQueries } from './database.js';
import type { Database } from './schema.js';
import { KyselyClientStore } from './repositories/oauth/clients.js';
import { KyselyCodeStore } from './repositories/oauth/codes.js';
import { KyselyConsentStore } from './repositories/oauth/consents.js';
import { KyselyDpopProofStore } from './repositories/oauth/dpop-proofs.js';
import { KyselyGrantStore } from './repositories/oauth/grants.js';
import { KyselyHousekeeping } from './repositories/housekeeping.js';
import { KyselyKeyStore } from './repositories/oidc/keys.js';
import { KyselyLeakedCredentialStore } from './repositories/credentials/leaked-credentials.js';
import { KyselyLogoutDeliveryStore } from './repositories/oidc/logout-deliveries.js';
import { KyselyMemberEmailStore } from './repositories/accounts/member-emails.js';
import { KyselyMailOutboxStore } from './repositories/mail/outbox.js';
import { KyselyOneTimeSecretStore } from './repositories/credentials/one-time-secrets.js';
import { KyselyPasskeyStore } from './repositories/accounts/passkeys.js';
import { KyselyPendingSignInStore } from './repositories/accounts/pending-sign-ins.js';
import { KyselyPersonalTokenStore } from './repositories/credentials/personal-tokens.js';
import { KyselyPostStore } from './repositories/community/posts.js';
import { KyselyPushedRequestStore } from './repositories/oauth/pushed-requests.js';
import { KyselySealedColumnStore } from './repositories/credentials/sealed-columns.js';
import { KyselySecondFactorStore } from './repositories/accounts/second-factors.js';
import { KyselySecurityEventStore } from './repositories/accounts/security-events.js';
import { KyselyServerSecretStore } from './repositories/credentials/server-secrets.js';
import { KyselySessionStore } from './repositories/accounts/sessions.js';
import { KyselyAppDirectory, KyselyDailyFigureStore, KyselyMemberDirectory, KyselyRoleStore, KyselyStaffLogStore } from './repositories/staff/staff-log.js';
import { KyselyTokenStore } from './repositories/oauth/tokens.js';
import { KyselyUserStore } from './repositories/accounts/users.js';

/** `queries` are compiled once per database; its transactions' stores share them. */
export function createStores(db: Kysely<Database>, queries: CompiledQueries): Stores {
  const clients = new KyselyClientStore(db, queries);
  const memberEmails = new KyselyMemberEmailStore(db);
  return {
    users: new KyselyUserStore(db, queries),
    posts: new KyselyPostStore(db, queries),
    clients,
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
    mailOutbox: new KyselyMailOutboxStore(db),
    memberEmails,
    mailRecipients: memberEmails,
    secondFactors: new KyselySecondFactorStore(db),
    passkeys: new KyselyPasskeyStore(db),
    pendingSignIns: new KyselyPendingSignInStore(db),
    securityEvents: new KyselySecurityEventStore(db),
    pushedRequests: new KyselyPushedRequestStore(db),
    leakedCredentials: new KyselyLeakedCredentialStore(db),
    dpopProofs: new KyselyDpopProofStore(db, queries),
    oneTimeSecrets: new KyselyOneTimeSecretStore(db),
    roles: new KyselyRoleStore(db),
    staffLog: new KyselyStaffLogStore(db),
    memberDirectory: new KyselyMemberDirectory(db),
    dailyFigures: new KyselyDailyFigureStore(db),
    appDirectory: new KyselyAppDirectory(db, clients),
    housekeeping: new KyselyHousekeeping(db),
    transaction: (work) => queries.transaction(db, (trx) => work(createStores(trx, queries))),
    readSnapshot: (work) => queries.readSnapshot(db, (picture, its) => work(createStores(picture, its))),
  };
}
