import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Housekeeping, PurgeOptions } from '../../core/stores.js';
import type { Instant } from '../../core/time.js';
import type { Database } from '../schema.js';

/**
 * Deletes rows no rule needs any more, a batch at a time so no statement holds the hot tables
 * for long. Used codes and rotated refresh tokens stay until they expire (plus the audit window),
 * because a replay of either must still be recognised as reuse (RFC 9700 4.14.2). Signing keys go
 * as soon as they leave the JWKS, with no audit window.
 *
 * Each batch is followed by a turn of the event loop: on SQLite a statement runs synchronously
 * and Kysely's promises resolve at once, so without it a sweep of many rows (100,000 expired
 * tokens took 9 s) held the server's event loop from its first batch to its last, and every
 * request waited for the whole sweep instead of one batch.
 */
export class KyselyHousekeeping implements Housekeeping {
  constructor(private readonly db: Kysely<Database>) {}

  async purge(now: Instant, options: PurgeOptions): Promise<Record<string, number>> {
    const before = now - options.auditWindowMs;
    const batch = options.batchSize;
    const deleted: Record<string, number> = {};

    const drain = async (name: string, deleteBatch: () => Promise<number>) => {
      let total = 0;
      for (;;) {
        const n = await deleteBatch();
        total += n;
        await nextTurn();
        if (n < batch) break;
      }
      deleted[name] = (deleted[name] ?? 0) + total;
    };

    await drain('authorization_codes', async () => {
      const r = await this.db.deleteFrom('authorization_codes').where('code_hash', 'in', (eb) =>
        eb.selectFrom('authorization_codes').select('code_hash').where('expires_at', '<', before).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    for (const table of ['access_tokens', 'refresh_tokens'] as const) {
      await drain(table, async () => {
        const r = await this.db.deleteFrom(table).where('id', 'in', (eb) =>
          eb.selectFrom(table).select('id')
            .where((w) => w.or([w('expires_at', '<', before), w('revoked_at', '<', before)])).limit(batch),
        ).executeTakeFirst();
        return Number(r.numDeletedRows);
      });
    }
    // A sealed replay answer is worth keeping only while a window could honour it (INTERFACE
    // section 11); past the longest window allowed (and a margin) it is only a liability: whoever held its
    // rotated token and a copy of the database could open it.
    const sealedBefore = now - options.sealedAnswerMaxAgeMs;
    await drain('sealed_replay_answers', async () => {
      const r = await this.db.updateTable('refresh_tokens').set({ replay_sealed: null }).where('id', 'in', (eb) =>
        eb.selectFrom('refresh_tokens').select('id').where('replay_sealed', 'is not', null).where('used_at', '<', sealedBefore).limit(batch),
      ).executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
    await drain('personal_tokens', async () => {
      const r = await this.db.deleteFrom('personal_tokens').where('id', 'in', (eb) =>
        eb.selectFrom('personal_tokens').select('id')
          .where((w) => w.or([w('expires_at', '<', before), w('revoked_at', '<', before)])).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A grant goes once it is revoked, or idle for longer than any token of it can live.
    const idleBefore = before - options.grantLifetimeMs;
    await drain('grants', async () => {
      const r = await this.db.deleteFrom('grants').where('id', 'in', (eb) =>
        eb.selectFrom('grants').select('id')
          .where((w) => w.or([w('revoked_at', '<', before), w('last_used_at', '<', idleBefore)])).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    await drain('sessions', async () => {
      const r = await this.db.deleteFrom('sessions').where('id_hash', 'in', (eb) =>
        eb.selectFrom('sessions').select('id_hash')
          .where((w) => w.or([w('expires_at', '<', before), w('ended_at', '<', before)])).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A key leaves the JWKS once no id_token it signed can still be valid (or at once after a
    // compromise); from then on its private half is only a liability.
    await drain('signing_keys', async () => {
      const r = await this.db.deleteFrom('signing_keys').where('kid', 'in', (eb) =>
        eb.selectFrom('signing_keys').select('kid').where('withdrawn_at', '<=', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // Back-channel logouts delivered or given up stay for the audit window; one still pending
    // past its maximum age plus that window has had no instance to deliver it, and is past use.
    const stalePending = before - options.deliveryMaxAgeMs;
    await drain('logout_deliveries', async () => {
      const r = await this.db.deleteFrom('logout_deliveries').where('id', 'in', (eb) =>
        eb.selectFrom('logout_deliveries').select('id')
          .where((w) => w.or([w('delivered_at', '<', before), w('abandoned_at', '<', before), w('created_at', '<', stalePending)])).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A mail sent or given up keeps no body already; its row goes after the audit window. One
    // still pending past its maximum age plus that window has had no instance to send it, and
    // its body (a reset link, perhaps) must not stay forever.
    const staleMail = before - options.mailMaxAgeMs;
    await drain('mail_outbox', async () => {
      const r = await this.db.deleteFrom('mail_outbox').where('id', 'in', (eb) =>
        eb.selectFrom('mail_outbox').select('id')
          .where((w) => w.or([w('sent_at', '<', before), w('abandoned_at', '<', before), w('created_at', '<', staleMail)])).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    await drain('email_links', async () => {
      const r = await this.db.deleteFrom('email_links').where('token_hash', 'in', (eb) =>
        eb.selectFrom('email_links').select('token_hash').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // Single-use things of account security are worth nothing once expired; a used one only
    // until it would have expired anyway (the conditional write already refuses it).
    await drain('webauthn_challenges', async () => {
      const r = await this.db.deleteFrom('webauthn_challenges').where('challenge', 'in', (eb) =>
        eb.selectFrom('webauthn_challenges').select('challenge').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    await drain('pending_sign_ins', async () => {
      const r = await this.db.deleteFrom('pending_sign_ins').where('id_hash', 'in', (eb) =>
        eb.selectFrom('pending_sign_ins').select('id_hash').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A DPoP proof's jti is worth keeping only while the proof could be accepted again (RFC 9449 11.1).
    await drain('dpop_proofs', async () => {
      const r = await this.db.deleteFrom('dpop_proofs').where('key', 'in', (eb) =>
        eb.selectFrom('dpop_proofs').select('key').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    await drain('one_time_secrets', async () => {
      const r = await this.db.deleteFrom('one_time_secrets').where('id_hash', 'in', (eb) =>
        eb.selectFrom('one_time_secrets').select('id_hash').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A pushed authorization request lives 60 seconds (RFC 9126 4); used or not, it is worthless after.
    await drain('pushed_authorization_requests', async () => {
      const r = await this.db.deleteFrom('pushed_authorization_requests').where('request_hash', 'in', (eb) =>
        eb.selectFrom('pushed_authorization_requests').select('request_hash').where('expires_at', '<', now).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // INTERFACE section 13: an app that registered itself (RFC 7591) and got no grant within the
    // grace period goes, in one conditional delete: a grant made meanwhile keeps it, and so does
    // staff's verified mark, set meanwhile or in the same instant (INTERFACE section 14: someone
    // answers for it now). Its consents and pushed requests go with it (foreign keys).
    const registeredBefore = now - options.selfRegisteredGraceMs;
    await drain('clients', async () => {
      const r = await this.db.deleteFrom('clients').where('client_id', 'in', (eb) =>
        eb.selectFrom('clients').select('client_id')
          // 1: PostgreSQL reads it as true.
          .where('self_registered', '=', 1)
          .where('verified_at', 'is', null)
          .where('created_at', '<', registeredBefore)
          .where((w) => w.not(w.exists(w.selectFrom('grants').select('id').whereRef('grants.client_id', '=', 'clients.client_id'))))
          .limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // A document's app's row (client-metadata.ts) that no member approved, an operator did not
    // deactivate and staff did not verify is only what a push left, storable by anyone for any
    // URL: it goes once its document has not refreshed it for the grace period (a later push or
    // approval makes it anew). Staff's mark is kept with its row, as a self-registered app's is.
    const describedBefore = now - options.documentClientGraceMs;
    await drain('clients', async () => {
      const r = await this.db.deleteFrom('clients').where('client_id', 'in', (eb) =>
        eb.selectFrom('clients').select('client_id')
          .where((w) => w.or([w('client_id', 'like', 'https://%'), w('client_id', 'like', 'http://%')]))
          .where('status', '=', 'active')
          .where('verified_at', 'is', null)
          .where('updated_at', '<', describedBefore)
          .where((w) => w.not(w.exists(w.selectFrom('grants').select('id').whereRef('grants.client_id', '=', 'clients.client_id'))))
          .where((w) => w.not(w.exists(w.selectFrom('consents').select('user_id').whereRef('consents.client_id', '=', 'clients.client_id'))))
          .limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    // The security log keeps 90 days (issue 18 item 5).
    const logBefore = now - options.securityLogWindowMs;
    await drain('security_events', async () => {
      const r = await this.db.deleteFrom('security_events').where('id', 'in', (eb) =>
        eb.selectFrom('security_events').select('id').where('created_at', '<', logBefore).limit(batch),
      ).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    return deleted;
  }
}
