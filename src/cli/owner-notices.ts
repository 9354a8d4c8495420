/**
 * The security log as the server writes it, for a command that makes a staff change: the line in
 * the member's log of a change to their account or app, and its notice mail queued in the outbox,
 * which the server's instances send (the command line sends none itself). What the notices need
 * (the mail catalogs, the mailer) is loaded with the first notice, so a staff change that tells
 * no member (`svc user set-status`, `svc keys rotate`) starts as light as any other command.
 */
import type { BaseDeps } from '../base-deps.js';
import { SecurityLog } from '../core/accounts/security-log.js';
import type { NoticeSender } from '../core/accounts/security-notices.js';

export function withNotices(deps: BaseDeps): BaseDeps & { securityLog: SecurityLog } {
  let sender: Promise<NoticeSender> | undefined;
  const notify: NoticeSender = async (event, pageLocale) => (await (sender ??= noticeSender(deps)))(event, pageLocale);
  return { ...deps, securityLog: new SecurityLog(deps.stores.securityEvents, deps.clock, deps.audit, notify) };
}

async function noticeSender(deps: BaseDeps): Promise<NoticeSender> {
  const [{ securityNoticeSender }, { Mailer }, { siteTranslator }] = await Promise.all([
    import('../core/accounts/security-notices.js'), import('../core/mail/mailer.js'), import('../i18n/catalogs.js'),
  ]);
  // Mail is on as the server's settings have it (src/mail/transports.ts): any transport but none.
  const mailer = new Mailer(deps.settings.mail.kind !== 'off', siteTranslator(deps.settings.siteNames));
  return securityNoticeSender({ stores: deps.stores, clock: deps.clock, mailer, settings: deps.settings });
}
