/**
 * The security log as the server writes it, for a command that makes a staff change: the line in
 * the member's log of a change to their account or app, and its notice mail queued in the outbox,
 * which the server's instances send (the command line sends none itself). Loaded by the commands
 * that need it, not at every start.
 */
import type { BaseDeps } from '../base-deps.js';
import type { SecurityLog } from '../core/accounts/security-log.js';
import { noticingSecurityLog } from '../core/accounts/security-notices.js';
import { Mailer } from '../core/mail/mailer.js';
import { siteTranslator } from '../i18n/catalogs.js';

export function withNotices(deps: BaseDeps): BaseDeps & { securityLog: SecurityLog } {
  // Mail is on as the server's settings have it (src/mail/transports.ts): any transport but none.
  const mailer = new Mailer(deps.settings.mail.kind !== 'off', siteTranslator(deps.settings.siteNames));
  return { ...deps, securityLog: noticingSecurityLog({ stores: deps.stores, clock: deps.clock, mailer, settings: deps.settings }, deps.audit) };
}
