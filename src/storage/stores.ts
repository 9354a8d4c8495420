/** Builds every store over one Kysely handle (a connection pool or a transaction). */
import type { Kysely } from 'kysely';
import type { Stores } from '../core/ports.js';
import type { Database } from './schema.js';
import { KyselyClientStore } from './repositories/clients.js';
import { KyselyCodeStore } from './repositories/codes.js';
import { KyselyConsentStore } from './repositories/consents.js';
import { KyselyGrantStore } from './repositories/grants.js';
import { KyselyHousekeeping } from './repositories/housekeeping.js';
import { KyselyKeyStore } from './repositories/keys.js';
import { KyselyPersonalTokenStore } from './repositories/personal-tokens.js';
import { KyselyPostStore } from './repositories/posts.js';
import { KyselySessionStore } from './repositories/sessions.js';
import { KyselyTokenStore } from './repositories/tokens.js';
import { KyselyUserStore } from './repositories/users.js';

export function createStores(db: Kysely<Database>): Stores {
  return {
    users: new KyselyUserStore(db),
    posts: new KyselyPostStore(db),
    clients: new KyselyClientStore(db),
    consents: new KyselyConsentStore(db),
    grants: new KyselyGrantStore(db),
    codes: new KyselyCodeStore(db),
    tokens: new KyselyTokenStore(db),
    personalTokens: new KyselyPersonalTokenStore(db),
    keys: new KyselyKeyStore(db),
    sessions: new KyselySessionStore(db),
    housekeeping: new KyselyHousekeeping(db),
    transaction: (work) =>
      db.isTransaction
        ? work(createStores(db))
        : db.transaction().execute((trx) => work(createStores(trx))),
  };
}
