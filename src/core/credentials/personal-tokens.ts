/** Personal API tokens (seed 5.1, INTERFACE section 2): chosen scopes and lifetime. */
import { requireActiveAccount } from '../accounts/accounts.js';
import { hashSecret } from './formats.js';
import type { TokenMarks } from './token-marks.js';
import { InputError, checkAll } from '../errors.js';
import type { Stores } from '../stores.js';
import type { PersonalToken } from './ports.js';
import { RESOURCE_SCOPES, formatScope } from '../oauth/scopes.js';
import { checkedText } from '../text.js';
import { dayLimitRefusal } from '../day-limits.js';
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
/**
 * Tokens one account may create in any 24 hours, revoked and expired ones included: revoked ones
 * free their place under `MAX_PERSONAL_TOKENS`, so without it a script holding a session and the
 * password created and revoked in a loop and added rows without end. As many as the live cap, so
 * a member can replace every token they hold in one day (all revoked after a leak); no one types
 * a password a hundred times a day for anything else. Counted from the stored rows' creation
 * times, which the janitor keeps past it (`AUDIT_WINDOW_MS`, 7 days after revocation or expiry),
 * so it holds across instances and restarts. An account then holds at most about 100 live tokens
 * and 8 days of creations, 900 rows.
 */
export const PERSONAL_TOKENS_PER_DAY = 100;

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
 * The refusal (field `tokens`) of a new token for an account that created `PERSONAL_TOKENS_PER_DAY`
 * in the last 24 hours or holds `MAX_PERSONAL_TOKENS` live ones, or none when it has room. The
 * day is asked first: revoking one makes no room in it. It decides inside `createPersonalToken`'s
 * transaction, holding the account; read before it, it lets a form say so before it asks for
 * anything more (the password).
 */
export async function personalTokenCapRefusal(stores: Stores, userId: number, now: Instant): Promise<InputError | undefined> {
  const today = await dayLimitRefusal((since, limit) => stores.personalTokens.createdSince(userId, since, limit), PERSONAL_TOKENS_PER_DAY, now, {
    field: 'tokens', key: 'tokens.dailyLimitReached',
    english: `you have created ${PERSONAL_TOKENS_PER_DAY} tokens in the last 24 hours, the most an account can create in a day`,
  });
  if (today) return today;
  return await stores.personalTokens.countLive(userId, now) >= MAX_PERSONAL_TOKENS ? tooManyTokens() : undefined;
}

/**
 * Creates a personal token; the plain token is returned here once and never stored. Only for an
 * active account (`AccountUnusableError` otherwise, INTERFACE section 4) with fewer than
 * `MAX_PERSONAL_TOKENS` live ones and `PERSONAL_TOKENS_PER_DAY` made in the last 24 hours
 * (`InputError` otherwise). It bears the service's mark (`marks`).
 */
export async function createPersonalToken(stores: Stores, clock: Clock, marks: TokenMarks, request: PersonalTokenRequest): Promise<{ token: string; record: PersonalToken }> {
  const name = checkPersonalTokenRequest(request);
  const token = (await marks.ready()).generate('personal');
  // Counted holding the account's row: two racing at the cap or the day's last place cannot both
  // land (the second waits for the first and counts its token), and a deletion waits for it or is seen.
  const record = await stores.transaction(async (tx) => {
    await requireActiveAccount(tx, request.userId, 'have a personal token');
    const now = clock.now();
    const refusal = await personalTokenCapRefusal(tx, request.userId, now);
    if (refusal) throw refusal;
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
