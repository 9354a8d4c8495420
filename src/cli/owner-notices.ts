/**
 * The security log as the server writes it, for a command that changes a member's app: its line
 * in the member's log, and its notice mail queued in the outbox, which the server's instances send
 * (the command line sends none itself). Loaded by the commands that need it, not at every start.
 */
import type { BaseDeps } from '../base-deps.js';
import type { SecurityLog } from '../core/accounts/security-log.js';
import { noticingSecurityLog } from '../core/accounts/security-notices.js';
import { Mailer } from '../core/mail/mailer.js';
import { siteTranslator } from '../i18n/catalogs.js';

export function ownersSecurityLog(deps: BaseDeps): SecurityLog {
  // Mail is on as the server's settings have it (src/mail/transports.ts): any transport but none.
  const mailer = new Mailer(deps.settings.mail.kind !== 'off', siteTranslator(deps.settings.siteNames));
  return noticingSecurityLog({ stores: deps.stores, clock: deps.clock, mailer, settings: deps.settings }, deps.audit);
}
