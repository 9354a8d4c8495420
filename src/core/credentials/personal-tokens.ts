/** Personal API tokens (seed 5.1, INTERFACE section 2): chosen scopes and lifetime. */
import { requireActiveAccount } from '../accounts/accounts.js';
import { hashSecret } from './formats.js';
import type { TokenMarks } from './token-marks.js';
import { InputError, checkAll } from '../errors.js';
import type { Stores } from '../stores.js';
import type { PersonalToken } from './ports.js';
import { RESOURCE_SCOPES, formatScope } from '../oauth/scopes.js';
import { checkedText } from '../text.js';
import { type Clock, type Instant, days, hasExpired } from '../time.js';

/** Lifetimes a user can choose, in days; `null` is no expiry. 90 is the default. */
export const PERSONAL_TOKEN_LIFETIMES: readonly (number | null)[] = [7, 30, 90, 365, null];
export const DEFAULT_PERSONAL_TOKEN_DAYS = 90;
/**
 * Live tokens (neither revoked nor expired) one account may hold: a session would otherwise make
 * them without end, each a row and a line of the tokens page. Revoked and expired ones do not
 * count: the member makes room by revoking one. 100, as generous as a script farm needs.
 */
export const MAX_PERSONAL_TOKENS = 100;

export type PersonalTokenStatus = 'active' | 'expired' | 'revoked';

/** A token's state as its lists name it: revoked wins over expired, and expired is `hasExpired`, the bearer gate's rule. */
export function personalTokenStatus(token: Pick<PersonalToken, 'revokedAt' | 'expiresAt'>, now: Instant): PersonalTokenStatus {
  if (token.revokedAt !== null) return 'revoked';
  return hasExpired(token.expiresAt, now) ? 'expired' : 'active';
}

export interface PersonalTokenRequest {
  userId: number;
  name: string;
  scopes: string[];
  /** Days until expiry, or `null` for none. */
  expiresInDays: number | null;
}

/**
 * The request's name, checked, or one `InputError` naming every field at fault (name, scopes,
 * expiry), so a form can show them all at once (issue 18 item 10).
 */
export function checkPersonalTokenRequest(request: Omit<PersonalTokenRequest, 'userId'>): string {
  const [name] = checkAll(
    () => checkedText('name', request.name, { kind: 'line', max: 60 }),
    () => {
      if (request.scopes.length === 0) throw InputError.worded('scopes', 'choose at least one scope', { key: 'tokens.scopesNone' });
      const unknown = request.scopes.filter((s) => !(RESOURCE_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) {
        throw InputError.worded('scopes', `unknown scope ${unknown.join(', ')}; personal tokens can have ${RESOURCE_SCOPES.join(', ')}`,
          { key: 'tokens.scopesUnknown', values: { unknown, scopes: RESOURCE_SCOPES } });
      }
    },
    () => {
      if (!PERSONAL_TOKEN_LIFETIMES.includes(request.expiresInDays)) {
        throw InputError.worded('expires_in_days', 'expiry must be 7, 30, 90 or 365 days, or none', { key: 'tokens.expiryUnknown' });
      }
    },
  );
  return name;
}

function tooManyTokens(): InputError {
  return InputError.worded('tokens', `you have ${MAX_PERSONAL_TOKENS} live tokens, the most an account can have; revoke one before creating another`,
    { key: 'tokens.limitReached', values: { max: MAX_PERSONAL_TOKENS } });
}

/**
 * The refusal (field `tokens`) of a new token for an account with `MAX_PERSONAL_TOKENS` live ones,
 * none when it has room, for a form to say so before it asks for anything more (the password). A
 * read only: `createPersonalToken` decides, holding the account.
 */
export async function personalTokenCapRefusal(stores: Stores, clock: Clock, userId: number): Promise<InputError | undefined> {
  return await stores.personalTokens.countLive(userId, clock.now()) >= MAX_PERSONAL_TOKENS ? tooManyTokens() : undefined;
}

/**
 * Creates a personal token; the plain token is returned here once and never stored. Only for an
 * active account (`AccountUnusableError` otherwise, INTERFACE section 4) with fewer than
 * `MAX_PERSONAL_TOKENS` live ones (`InputError` otherwise). It bears the service's mark (`marks`).
 */
export async function createPersonalToken(stores: Stores, clock: Clock, marks: TokenMarks, request: PersonalTokenRequest): Promise<{ token: string; record: PersonalToken }> {
  const name = checkPersonalTokenRequest(request);
  const token = (await marks.ready()).generate('personal');
  // Counted holding the account's row: two racing at the cap cannot both land (the second waits
  // for the first and counts its token), and a deletion waits for it or is seen.
  const record = await stores.transaction(async (tx) => {
    await requireActiveAccount(tx, request.userId, 'have a personal token');
    const now = clock.now();
    if (await tx.personalTokens.countLive(request.userId, now) >= MAX_PERSONAL_TOKENS) throw tooManyTokens();
    return tx.personalTokens.insert({
      userId: request.userId,
      name,
      tokenHash: hashSecret(token),
      scope: formatScope(request.scopes),
      expiresAt: request.expiresInDays === null ? null : now + days(request.expiresInDays),
    }, now);
  });
  return { token, record };
}
