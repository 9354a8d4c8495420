/**
 * The back-channel logout worker of one server instance (INTERFACE section 5): every
 * `LOGOUT_DELIVERY_INTERVAL` seconds it looks for due deliveries and sends them
 * (`deliverDueLogouts`), on the timer every durable queue shares (`queue-worker.ts`).
 */
import { type DeliveryDeps, type DeliveryPass, DELIVERY_BATCH, type LogoutTokenSender, deliverDueLogouts } from './core/oidc/logout/delivery.js';
import { QueueWorker } from './queue-worker.js';

export class LogoutDeliveryWorker extends QueueWorker<DeliveryPass> {
  /** `intervalMs` 0: no timer; passes run only when `runOnce` is called (tests, or another instance delivers). */
  constructor(deps: DeliveryDeps, sender: LogoutTokenSender, intervalMs: number) {
    super((log) => deliverDueLogouts(deps, sender, log), { intervalMs, batch: DELIVERY_BATCH, name: 'back-channel logout' });
  }
}
