/**
 * A way back into an account whose password is forgotten (INTERFACE section 12). A request names
 * a username or a verified address; whatever it names, the answer is the same and costs the same:
 * only the per-address count is taken before answering; the look-up, the link and its mail are
 * left for the caller to run once the answer has gone (`mailLinks`). A link works once, for 30 minutes
 * (its mail says until when), and is stored as its SHA-256. Using it needs the second step when the account has two-step
 * verification, sets a password under the sign-up rules, and ends every sign-in session; apps'
 * grants stay, as after a password change (OWASP ASVS 2.5, 3.3.3).
 */
import { siteUrls } from '../urls.js';
import { endOtherSignInSessions } from '../oidc/logout/events.js';
import { addressKey } from '../addresses.js';
import { generateOpaqueId, hashSecret } from '../credentials/formats.js';
import { type FieldProblem, InputError } from '../errors.js';
import type { Locale } from '../locales.js';
import { sameWindow } from '../rate-limiter.js';
import type { Instant } from '../time.js';
import { isolated } from '../text.js';
import { checkNewPassword, findTypedAccount } from './accounts.js';
import { type EmailDeps, emailKey, mailLocale, mailTime, readEmailAddress } from './email.js';
import { accountKey } from './device-cookies.js';
import { hashPassword } from './passwords.js';
import type { EmailLink, User } from './ports.js';
import { type AttemptOrigin, type Throttled, recordRefusedSignIn, throttled } from './sign-in.js';
import { type TwoStepDeps, checkSecondFactorCode, requiresSecondStep } from './two-step.js';

export const RESET_LINK_MS = 30 * 60_000;
/** Reset mails one account may be sent in an hour: enough to retry, too few to flood its owner. */
export const RESET_MAILS_PER_ACCOUNT = 5;
/** Requests one address may make in an hour. */
export const RESET_REQUESTS_PER_ADDRESS = 20;
export const RESET_WINDOW_SECONDS = 3600;
/** The reset mail's name in `mail.json`, and its kind in the outbox. */
const RESET_MAIL = 'passwordReset';

export type ResetDeps = EmailDeps & TwoStepDeps;

/**
 * Handles a forgotten-password request for `login` (a username or an address). The outcome says
 * nothing of what `login` names and nothing in it depends on that: throttled for the address, or
 * `ok` with `mailLinks`, the work that does depend on it, to run after answering.
 */
export async function requestPasswordReset(deps: ResetDeps, login: string, origin: AttemptOrigin, pageLocale: Locale): Promise<{ ok: true; mailLinks: () => Promise<void> } | Throttled> {
  const now = deps.clock.now();
  const byAddress = await deps.limiter.hit(`reset:address:${addressKey(origin.address)}`, RESET_REQUESTS_PER_ADDRESS, RESET_WINDOW_SECONDS, now);
  if (!byAddress.allowed) return throttled(byAddress, now);
  return { ok: true, mailLinks: () => mailResetLinks(deps, login.trim(), pageLocale, now) };
}

/**
 * Queues a reset link to each account `login` names, within the per-account limit. A reset mail of
 * the account's still waiting in the outbox after a failed attempt (the SMTP server away) is
 * replaced by the new one and takes its count back when it was counted in the same hour; one not tried yet is not, or asks faster than
 * the outbox sends would keep every mail from going out (attack117): asking again during an outage left a mail with a dead link for each ask
 * once the server returned, and used up the hour's mails, so the ask that would work then mailed
 * nothing while its page said the link was sent.
 */
async function mailResetLinks(deps: ResetDeps, login: string, pageLocale: Locale, now: Instant): Promise<void> {
  for (const owner of await accountsNamedBy(deps, login)) {
    const key = `reset:account:${owner.user.id}`;
    const perAccount = await deps.limiter.hit(key, RESET_MAILS_PER_ACCOUNT, RESET_WINDOW_SECONDS, now);
    if (!perAccount.allowed) continue;
    const token = generateOpaqueId();
    const replaced = await deps.stores.transaction(async (tx) => {
      const link = { tokenHash: hashSecret(token), userId: owner.user.id, purpose: 'reset_password', addressKey: null, expiresAt: now + RESET_LINK_MS } as const;
      // The mail first, queued only while the address is still the account's: an account deletion
      // that erased it since it was read is waited for or seen, and then neither the mail nor its
      // link is written (`MailOutboxStore.enqueue`). The new mail, not tried yet, is not superseded.
      // The end of the link is the one stored, as a time: the mail may wait in the outbox long after it was queued.
      const queued = await deps.mailer.send(tx, {
        to: owner.address, userId: owner.user.id, locale: mailLocale(owner.user, pageLocale), name: RESET_MAIL,
        values: {
          // A name someone chose, isolated where it could reorder the greeting (UAX #9, `isolated`).
          name: isolated(owner.user.nickname), username: owner.user.username, link: siteUrls(deps.settings.baseUrl).resetPassword(token),
          minutes: RESET_LINK_MS / 60_000, expires: mailTime(link.expiresAt, owner.user, deps.settings.siteTimeZone),
        },
      }, now);
      if (!queued) return false;
      const superseded = await tx.mailOutbox.supersede(owner.user.id, RESET_MAIL, now);
      await tx.memberEmails.createLink(link, now);
      // Only a mail counted in this hour's window can give its count back: one from the hour
      // before is no longer in the counter, and taking this ask's count back for it would let
      // each hour hold one mail more than the limit.
      return superseded.some((mail) => sameWindow(mail.createdAt, now, RESET_WINDOW_SECONDS));
    });
    if (replaced) await deps.limiter.refund(key, RESET_WINDOW_SECONDS, now, perAccount);
  }
}

/**
 * The active accounts `login` names that have a verified address: by username (read as sign-in
 * reads it, `findTypedAccount`: full-width letters too), or by that address, as typed or as the e-mail
 * settings read it (`readEmailAddress`, NFKC among it): a Chinese input method in full-width mode
 * types `ｎａｍｅ＠ｅｘａｍｐｌｅ．ｃｏｍ`, with no `@` at all, and an address saved before the settings
 * read addresses so is still found as saved.
 */
async function accountsNamedBy(deps: ResetDeps, login: string): Promise<Array<{ user: User; address: string }>> {
  const read = readEmailAddress(login);
  const ids = read.includes('@')
    ? await verifiedOwnersOf(deps, [login, read])
    : [(await findTypedAccount(deps.stores, login))?.id].filter((id): id is number => id !== undefined);
  const found: Array<{ user: User; address: string }> = [];
  for (const id of ids) {
    const [user, email] = await Promise.all([deps.stores.users.findById(id), deps.stores.memberEmails.find(id)]);
    if (user?.status === 'active' && email?.verifiedAt != null) found.push({ user, address: email.address });
  }
  return found;
}

/** The accounts whose verified address is one of `spellings`, each compared lower-cased (`emailKey`). */
async function verifiedOwnersOf(deps: ResetDeps, spellings: string[]): Promise<number[]> {
  const owners = await Promise.all([...new Set(spellings.map(emailKey))].map((key) => deps.stores.memberEmails.verifiedOwners(key)));
  return [...new Set(owners.flat())];
}

/** A reset link still usable, its account, and whether that account needs the second step. */
export async function findResetLink(deps: ResetDeps, token: string): Promise<{ link: EmailLink; user: User; needsCode: boolean } | undefined> {
  if (token === '') return undefined;
  const link = await deps.stores.memberEmails.findLiveLink(hashSecret(token), 'reset_password', deps.clock.now());
  const user = link && await deps.stores.users.findById(link.userId);
  if (!link || user?.status !== 'active') return undefined;
  return { link, user, needsCode: await requiresSecondStep(deps.stores, user.id) };
}

export type PasswordReset =
  | { ok: true; user: User; sessionsEnded: number }
  /** Used, expired or unknown: nothing changed. */
  | { ok: false; reason: 'invalid_link' }
  | { ok: false; reason: 'invalid'; problems: readonly FieldProblem[]; needsCode: boolean }
  | Throttled;

/** Sets the password with a reset link, the second step first when two-step verification is on. */
export async function resetPassword(deps: ResetDeps, form: { token: string; password: string; code: string }, origin: AttemptOrigin): Promise<PasswordReset> {
  const found = await findResetLink(deps, form.token);
  if (!found) return { ok: false, reason: 'invalid_link' };
  const { user, needsCode } = found;
  const invalid = (problem: FieldProblem): PasswordReset => ({ ok: false, reason: 'invalid', problems: [problem], needsCode });
  try {
    checkNewPassword(form.password, user.username);
  } catch (error) {
    if (error instanceof InputError) return { ok: false, reason: 'invalid', problems: error.problems, needsCode };
    throw error;
  }
  if (needsCode && form.code.trim() === '') return invalid({ field: 'code', message: 'enter a code of your authenticator app or a recovery code', words: { key: 'recovery.codeMissing' } });
  // Hashed before the code is spent: a full hash queue (503, `PasswordsBusyError`) after it would
  // have used up a recovery code, or the TOTP code's time step, for a password never set. With a
  // code, hashed once the sign-in counters let the code be tried: a throttled attempt costs no
  // argon2 computation, so a link cannot buy uncounted turns of the hash queue.
  let passwordHash: string | undefined;
  const hashNew = async () => { passwordHash = await hashPassword(form.password, { address: origin.address, account: accountKey(user.username) }); };
  if (needsCode) {
    const checked = await checkSecondFactorCode(deps, user, form.code.trim(), { ...origin, withResetLink: true }, hashNew);
    // The account left active since its link was read: the link is refused, as `findResetLink` now would.
    if (!checked.ok && checked.reason === 'not_active') return { ok: false, reason: 'invalid_link' };
    if (!checked.ok) {
      // Told to the owner as a wrong code after the password is: whoever tries it holds their mailbox.
      if (checked.reason !== 'unreadable') await recordRefusedSignIn(deps, user, origin, checked.reason === 'throttled' ? 'throttled' : 'invalid_second_factor');
      if (checked.reason === 'throttled') return checked;
      return invalid({ field: 'code', message: 'that code is not right', words: { key: 'recovery.codeWrong' } });
    }
  } else {
    await hashNew();
  }
  // Set by `hashNew` on every path that reaches here (a code checked, or none needed).
  if (passwordHash === undefined) throw new Error('the new password was not hashed');
  const newHash = passwordHash;
  const now = deps.clock.now();
  const sessionsEnded = await deps.stores.transaction(async (tx) => {
    // The link is used by the same transaction that sets the password: two racing resets set one.
    if (!(await tx.memberEmails.consumeLink(found.link.tokenHash, 'reset_password', now))) return undefined;
    await tx.memberEmails.endLinks(user.id, 'reset_password', now);
    await tx.users.setPasswordHash(user.id, newHash, now);
    return endOtherSignInSessions(tx, now, user.id, '');
  });
  if (sessionsEnded === undefined) return { ok: false, reason: 'invalid_link' };
  await deps.securityLog.record({ userId: user.id, kind: 'password.reset', origin, detail: { sessions_signed_out: String(sessionsEnded) } });
  return { ok: true, user, sessionsEnded };
}
