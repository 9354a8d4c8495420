/**
 * The site's mail and the accounts' security log, which mails its notices through it
 * (`securityNoticeSender`), built from the base parts: by the server (src/deps.ts) and by a command
 * that does what a member's page does and tells the member the same way (`svc client
 * rotate-secret`), so a notice has one path whoever made the change.
 */
import type { BaseDeps } from './base-deps.js';
import type { AuditSink } from './core/audit.js';
import { SecurityLog } from './core/accounts/security-log.js';
import { securityNoticeSender } from './core/accounts/security-notices.js';
import type { Locale, Translator } from './core/locales.js';
import { Mailer } from './core/mail/mailer.js';
import type { MailTransport } from './core/mail/ports.js';
import { siteTranslator } from './i18n/catalogs.js';
import { createMailTransport } from './mail/transports.js';

export interface Mailing {
  /** Where queued mail is sent; `undefined` when the site sends none. */
  readonly mailTransport: MailTransport | undefined;
  /** The site's words in a language, the site named as SITE_NAME names it (`Settings.siteNames`). */
  readonly words: (locale: Locale) => Translator;
  /** Renders and queues mail; `enabled` says whether the site sends any (SMTP_URL, or `.eml` files on a developer's machine). */
  readonly mailer: Mailer;
  /** The accounts' security log; its events reach the server log through `audit`, and its notices the mail. */
  readonly securityLog: SecurityLog;
}

export function createMailing(deps: Pick<BaseDeps, 'settings' | 'stores' | 'clock'>, audit: AuditSink): Mailing {
  const { settings, stores, clock } = deps;
  const mailTransport = createMailTransport(settings.mail, settings.mailFrom);
  const words = siteTranslator(settings.siteNames);
  const mailer = new Mailer(mailTransport !== undefined, words);
  const securityLog = new SecurityLog(stores.securityEvents, clock, audit, securityNoticeSender({ stores, clock, mailer, settings }));
  return { mailTransport, words, mailer, securityLog };
}
