/**
 * Every secret the database holds in a form the service must read back (KEYS_SECRET in
 * docs/operations.md): sealed by `sealSecret` when KEYS_SECRET is set, each bound to its column
 * and row. Values kept only as hashes (passwords, tokens, client secrets, recovery codes) are not
 * here: nothing reads them back.
 */
import { KeysSecretError } from '../errors.js';
import type { Stores } from '../stores.js';
import type { SealedColumn, ServerSecretStore } from './ports.js';
import { quoted } from '../text.js';
import type { Instant } from '../time.js';
import { SEALED_MARK, SEALED_PREFIX, UNSEAL_FAILURES, type UnsealFailure, openSecret, sealSecret } from './sealing.js';

/** Each sealed column in the operator's words. */
export const SEALED_COLUMNS: Readonly<Record<SealedColumn, string>> = {
  'signing_keys.private_jwk': 'private signing keys',
  'totp_credentials.secret': 'TOTP seeds of authenticator apps',
  'server_secrets.value': 'server HMAC secrets (DPoP nonces, device cookies, pushed requests, token marks)',
};

/** The one line a start without KEYS_SECRET prints where BASE_URL is not a loopback address. */
export const PLAINTEXT_AT_REST_WARNING = `Warning: KEYS_SECRET is not set, so the database holds in plaintext the ${Object.values(SEALED_COLUMNS).join(', ')}; anyone with a copy of it can use them. Set KEYS_SECRET to a random secret of 32 characters or more, the same on every instance (KEYS_SECRET=$(openssl rand -base64 48)): the next start seals them.`;

/** Values read per round of `sealStoredSecrets`. */
const SEAL_BATCH = 100;

/** Sealed values of each column a start tries, in row order, for one that `keysSecret` opens. */
const OPEN_SAMPLE = 20;

/**
 * The column whose sampled values must all open once `keysSecret` opens one: the server HMAC
 * secrets, each of which serves every request of its use on every instance: one that does not
 * open where the others do was altered, or made by an instance given another KEYS_SECRET as it
 * started, and either way no instance can serve whole. A signing key or TOTP seed that does not
 * open is left to what reads it, which names it: the key ring a damaged key (`/readyz`), while the
 * other algorithm's signs and until the janitor deletes it once retired; a TOTP seed refuses its
 * account's codes, for which its member holds recovery codes.
 */
const EVERY_VALUE_OPENS: ReadonlySet<SealedColumn> = new Set(['server_secrets.value']);

/**
 * What a start does before anything reads a secret, and a command before it makes a shared key
 * (`readSharedKeysInStartTurn`): refuses (`KeysSecretError`, one line), before writing anything,
 * when `keysSecret` (none set, or another) opens none of a sealed column's first values (one that
 * opens tells one KEYS_SECRET from another without opening them all), or, for the server secrets,
 * when one of them does not open (`EVERY_VALUE_OPENS`).
 */
export async function checkStoredSecretsOpen(stores: Stores, keysSecret: string | undefined): Promise<void> {
  for (const column of Object.keys(SEALED_COLUMNS) as SealedColumn[]) {
    const sample = await stores.sealedColumns.listWithPrefix(column, SEALED_MARK, OPEN_SAMPLE);
    const closed = sample.flatMap(({ row, stored }) => {
      const opened = openSecret(stored, keysSecret, { column, row });
      return opened.ok ? [] : [{ row, reason: opened.reason }];
    });
    const [first] = closed;
    if (first === undefined) continue;
    // None opens: the one line of a missing or another KEYS_SECRET.
    if (closed.length === sample.length) throw cannotOpen(column, first.row, first.reason);
    if (EVERY_VALUE_OPENS.has(column)) {
      throw new KeysSecretError(`the ${SEALED_COLUMNS[column]} in the database do not all open with the KEYS_SECRET that opens the others (${column}, row${closed.length > 1 ? 's' : ''} ${closed.map(({ row }) => shownRow(row)).join(', ')}): sealed by an instance given another KEYS_SECRET, or altered; start every instance with the same KEYS_SECRET, and if they have it, delete those rows: the next start makes new ones`);
    }
  }
}

/**
 * What a start does before anything reads a secret, for every sealed column: first the refusals of
 * `checkStoredSecretsOpen`. Then, with `keysSecret`, it seals every value stored plain or in an
 * earlier form, each by a conditional write: an instance starting at the same moment may have
 * sealed it, or the value changed meanwhile (it is then another's to seal). An earlier form that
 * does not open is left as it is, as an altered value is: the first step showed that `keysSecret`
 * opens the column. Returns how many values this start sealed.
 */
export async function sealStoredSecrets(stores: Stores, keysSecret: string | undefined): Promise<number> {
  await checkStoredSecretsOpen(stores, keysSecret);
  if (keysSecret === undefined) return 0;
  let sealed = 0;
  for (const column of Object.keys(SEALED_COLUMNS) as SealedColumn[]) {
    let after: string | undefined;
    for (;;) {
      const batch = await stores.sealedColumns.listWithoutPrefix(column, SEALED_PREFIX, after, SEAL_BATCH);
      for (const { row, stored } of batch) {
        const opened = openSecret(stored, keysSecret, { column, row });
        if (opened.ok && await stores.sealedColumns.replace(column, row, stored, sealSecret(opened.plain, keysSecret, { column, row }))) sealed++;
      }
      if (batch.length < SEAL_BATCH) break;
      after = batch[batch.length - 1]!.row;
    }
  }
  return sealed;
}

/** The one line that stops a start, or a request, at a sealed value that `keysSecret` does not open. */
function cannotOpen(column: SealedColumn, row: string, reason: UnsealFailure): KeysSecretError {
  return new KeysSecretError(`the ${SEALED_COLUMNS[column]} in the database cannot be opened (${column}, row ${shownRow(row)}): ${UNSEAL_FAILURES[reason]}; start every instance with the KEYS_SECRET they were sealed with`);
}

/**
 * A row's key as a refusal names it: as stored when it is printable ASCII without spaces or quotes
 * (every key the service writes), else `quoted`, so a key written by hand in the database reads as
 * one key.
 */
function shownRow(row: string): string {
  return /^[\x21\x23-\x7e]+$/.test(row) ? row : quoted(row);
}

/**
 * The shared server secrets, sealed at rest when `keysSecret` is set: a new one is stored sealed
 * for its name, and the stored one opened. One that `keysSecret` cannot open throws
 * `KeysSecretError`: a start refuses a database holding one (`sealStoredSecrets`), so an instance
 * meets it only when another sealed the secrets after it started without KEYS_SECRET, or made
 * them under another one.
 */
export class SealedServerSecrets implements ServerSecretStore {
  constructor(private readonly secrets: ServerSecretStore, private readonly keysSecret: string | undefined) {}

  async getOrCreate(name: string, fresh: string, now: Instant): Promise<string> {
    const column = 'server_secrets.value';
    const stored = await this.secrets.getOrCreate(name, sealSecret(fresh, this.keysSecret, { column, row: name }), now);
    const opened = openSecret(stored, this.keysSecret, { column, row: name });
    if (opened.ok) return opened.plain;
    throw cannotOpen(column, name, opened.reason);
  }
}

/** `stores`, and those of its transactions, with the server secrets sealed at rest. */
export function withSealedServerSecrets(stores: Stores, keysSecret: string | undefined): Stores {
  return {
    ...stores,
    serverSecrets: new SealedServerSecrets(stores.serverSecrets, keysSecret),
    transaction: (work) => stores.transaction((tx) => work(withSealedServerSecrets(tx, keysSecret))),
    readSnapshot: (work) => stores.readSnapshot((picture) => work(withSealedServerSecrets(picture, keysSecret))),
  };
}
