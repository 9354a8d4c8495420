/**
 * Security notices by mail (INTERFACE section 12): what happened to an account, mailed to its
 * verified address in the member's language, so its owner hears of a change they did not make.
 * The security log calls `notify` for every event it records; `NOTICE_OF` says which tell.
 * A change of the address itself is told to the old address by `changeEmail`, not here.
 */
import { isolated } from '../text.js';
import { siteUrls } from '../urls.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailOutboxStore } from '../mail/ports.js';
import type { Locale } from '../locales.js';
import { mailLocale, mailTime } from './email.js';
import { SITE_STAFF, deviceText } from './user-agent.js';
import type { Clock } from '../time.js';
import type { AuditSink } from '../audit.js';
import type { MemberEmailStore, SecurityEvent, SecurityEventStore, UserStore } from './ports.js';
import { type SecurityEventKind, SecurityLog, signInProofOf } from './security-log.js';

/** The kinds that are mailed, and which of their events (`true`: every one). */
export const NOTICE_OF: Readonly<Partial<Record<SecurityEventKind, (detail: Record<string, string>) => boolean>>> = {
  // Only from a browser that held no device cookie of the account (`startSession`).
  'sign_in.succeeded': (detail) => detail.new_browser === 'yes',
  'password.changed': () => true,
  'password.reset': () => true,
  'totp.enabled': () => true,
  'totp.disabled': () => true,
  'passkey.added': () => true,
  'passkey.removed': () => true,
  // The first authorization of an app, not a later one that adds scopes (`authorize/flow.ts`).
  'app.authorized': (detail) => detail.first_time === 'yes',
  'personal_token.created': () => true,
  // Either hands the app's members to whoever made it: a secret acts as the app, a redirect URI
  // receives their codes (RFC 6819 4.1.5, 4.4.1.7).
  'client_secret.rotated': () => true,
  'client.redirect_uris_changed': () => true,
  // A credential the member holds, reported exposed (docs/api.md, "Leaked credentials"): what used
  // it stops working at once, an app for good, so its holder hears why and what to do now. Not an
  // app's access or refresh token: the member holds neither, and the app's owner fixes the leak.
  'personal_token.revoked_as_leaked': () => true,
  'client_secret.revoked_as_leaked': () => true,
  // Two-step verification turned off and every passkey removed, by staff in the console: the way
  // into an account talked out of staff by someone posing as its member (attack89b).
  // Not one that found nothing to remove: it turned nothing off (attack91).
  'staff.two_step_reset': (detail) => detail.removed !== 'nothing',
};

/**
 * The kinds the site's staff may make (`STAFF_ORIGIN`, at the command line) whose notice then has
 * words of its own (`…ByStaff`): the member's own notice asks them to change their password if it
 * was not them, which a staff action never is, and says nothing of what the member must do now
 * (an app whose secret staff replaced needs one its owner holds; a token staff made for a member
 * is revoked on their tokens page if they did not ask for it). attack82.
 */
const STAFF_WORDED: ReadonlySet<SecurityEventKind> = new Set(['client_secret.rotated', 'personal_token.created']);

/** The mail's name in `mail.json` for an event: `noticeSignIn`, `noticePasswordChanged`, `noticeClientSecretRotatedByStaff`… */
function noticeName(event: Pick<SecurityEvent, 'kind' | 'device'>): string {
  const name = `notice${event.kind.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
  return event.device === SITE_STAFF && STAFF_WORDED.has(event.kind as SecurityEventKind) ? `${name}ByStaff` : name;
}

export interface NoticeDeps {
  stores: { users: UserStore; memberEmails: MemberEmailStore; mailOutbox: MailOutboxStore; securityEvents: SecurityEventStore };
  clock: Clock;
  mailer: Mailer;
  settings: { siteTimeZone: string; baseUrl: string };
}

export type NoticeSender = (event: Omit<SecurityEvent, 'id'>, pageLocale: Locale | undefined) => Promise<void>;

/**
 * Mails the notice of `event` to the account's verified address, when the kind tells and there is
 * one: in the member's saved language, else the language of the page the event came from (the one
 * the member last used, in every case but someone else's sign-in), else the one of the page the
 * address was given on (`mailLocale`).
 */
export function securityNoticeSender(deps: NoticeDeps): NoticeSender {
  return async (event, pageLocale) => {
    if (!deps.mailer.enabled || !NOTICE_OF[event.kind as SecurityEventKind]?.(event.detail)) return;
    const [email, user] = await Promise.all([deps.stores.memberEmails.find(event.userId), deps.stores.users.findById(event.userId)]);
    if (!email || email.verifiedAt === null || !user) return;
    const locale = mailLocale(user, pageLocale, email);
    await deps.mailer.send(deps.stores, {
      to: email.address,
      userId: user.id,
      locale,
      name: noticeName(event),
      values: {
        // Names someone chose, isolated where they could reorder the sentence (UAX #9, `isolated`).
        name: isolated(user.nickname),
        time: mailTime(event.createdAt, user, deps.settings.siteTimeZone),
        device: event.device ? deviceText(deps.mailer.words(locale), event.device) : '-',
        address: event.address || '-',
        app: isolated(event.detail.app ?? ''),
        label: isolated(event.detail.name ?? event.detail.label ?? ''),
        settingsLink: siteUrls(deps.settings.baseUrl).securitySettings(),
        tokensLink: siteUrls(deps.settings.baseUrl).tokenSettings(),
        applicationsLink: siteUrls(deps.settings.baseUrl).applicationSettings(),
        appLink: event.detail.client_id ? siteUrls(deps.settings.baseUrl).developerApp(event.detail.client_id) : '',
        developersLink: siteUrls(deps.settings.baseUrl).developers(),
        // What the one who signed in held decides the advice: never to turn on what is on (attack86, attack87).
        proof: signInProofOf(event.detail.method),
      },
    }, deps.clock.now());
  };
}

/** The server's security log, which mails its notices (the command line's: src/cli/owner-notices.ts). */
export function noticingSecurityLog(deps: NoticeDeps, audit: AuditSink): SecurityLog {
  return new SecurityLog(deps.stores.securityEvents, deps.clock, audit, securityNoticeSender(deps));
}
