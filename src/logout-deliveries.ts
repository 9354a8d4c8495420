/**
 * The back-channel logout worker of one server instance (INTERFACE section 5): every
 * `LOGOUT_DELIVERY_INTERVAL` seconds it looks for due deliveries and sends them
 * (`deliverDueLogouts`). Every instance runs one; the claims in the database keep them from
 * sending the same row at once, and the rows outlive any of them, so a restart resumes where
 * the last run stopped. It runs while the app listens (`buildApp` starts it on `onListen` and
 * stops it on `onClose`, waiting for the attempts under way).
 */
import { type DeliveryDeps, type DeliveryLog, type DeliveryPass, DELIVERY_BATCH, type LogoutTokenSender, deliverDueLogouts } from './core/oidc/logout/delivery.js';

const QUIET: DeliveryLog = { info: () => {}, warn: () => {} };

export class LogoutDeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private log: DeliveryLog = QUIET;
  private running = false;
  private readonly passes = new Set<Promise<DeliveryPass>>();

  /** `intervalMs` 0: no timer; passes run only when `runOnce` is called (tests, or another instance delivers). */
  constructor(
    private readonly deps: DeliveryDeps,
    private readonly sender: LogoutTokenSender,
    private readonly intervalMs: number,
  ) {}

  /** Starts the timer (unless the interval is 0); passes log through `log`. */
  start(log: DeliveryLog): void {
    this.log = log;
    if (this.intervalMs === 0 || this.running) return;
    this.running = true;
    this.schedule(this.intervalMs);
  }

  /**
   * One pass now: claims what is due, sends it, records the outcomes. Safe beside the timer's and
   * another instance's passes: each claims its own rows.
   */
  runOnce(): Promise<DeliveryPass> {
    const pass = deliverDueLogouts(this.deps, this.sender, this.log);
    this.passes.add(pass);
    const forget = () => { this.passes.delete(pass); };
    pass.then(forget, forget);
    return pass;
  }

  /** Stops the timer and waits for the attempts under way (each ends within the send timeout). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.passes]);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(async () => {
      let again = this.intervalMs;
      try {
        const pass = await this.runOnce();
        // A full batch means more may be waiting: go on at once.
        if (pass.claimed === DELIVERY_BATCH) again = 0;
      } catch (error) {
        this.log.warn({ err: error }, 'back-channel logout pass failed; will retry');
      }
      if (this.running) this.schedule(again);
    }, delayMs);
    this.timer.unref();
  }
}
