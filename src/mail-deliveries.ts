/**
 * The mail sender of one server instance (INTERFACE section 12): every `MAIL_DELIVERY_INTERVAL`
 * seconds it sends the due mails of the outbox (`sendDueMail`), on the timer every durable queue
 * shares (`queue-worker.ts`). Without a transport (the site has no mail set up) it never runs.
 */
import { MAIL_BATCH, type MailDeps, type MailPass, sendDueMail } from './core/mail/outbox.js';
import type { MailTransport } from './core/mail/ports.js';
import { QueueWorker } from './queue-worker.js';

const NOTHING: MailPass = { claimed: 0, sent: 0, retrying: 0, abandoned: 0 };

export class MailDeliveryWorker extends QueueWorker<MailPass> {
  /** `intervalMs` 0: no timer; passes run only when `runOnce` is called (tests, or another instance sends). */
  constructor(deps: MailDeps, transport: MailTransport | undefined, intervalMs: number) {
    super(
      (log) => (transport ? sendDueMail(deps, transport, log) : Promise.resolve(NOTHING)),
      { intervalMs: transport ? intervalMs : 0, batch: MAIL_BATCH, name: 'mail' },
    );
  }
}
