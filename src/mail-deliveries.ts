/**
 * The mail sender of one server instance (INTERFACE section 12): every `MAIL_DELIVERY_INTERVAL`
 * seconds it sends the due mails of the outbox (`sendDueMail`), on the timer every durable queue
 * shares (`queue-worker.ts`). Without a transport (the site has no mail set up) it never runs.
 */
import { MAIL_BATCH, type MailDeps, type MailPass, RelayWatch, sendDueMail } from './core/mail/outbox.js';
import type { MailTransport } from './core/mail/ports.js';
import { QueueWorker } from './queue-worker.js';

const NOTHING: MailPass = { claimed: 0, sent: 0, retrying: 0, abandoned: 0, unanswered: 0 };

export class MailDeliveryWorker extends QueueWorker<MailPass> {
  /** `intervalMs` 0: no timer; passes run only when `runOnce` is called (tests, or another instance sends). */
  constructor(deps: MailDeps, transport: MailTransport | undefined, intervalMs: number) {
    // One watch over the relay across the passes: its trouble is logged as it starts and ends.
    const relay = new RelayWatch();
    super(
      (log) => (transport ? sendDueMail(deps, transport, log, relay) : Promise.resolve(NOTHING)),
      { intervalMs: transport ? intervalMs : 0, batch: MAIL_BATCH, name: 'mail' },
    );
  }
}
