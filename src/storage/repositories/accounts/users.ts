import { type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import { ConflictError } from '../../../core/errors.js';
import type { Avatar, NewUser, ProfileChanges, User, UserStatus, UserStore } from '../../../core/accounts/ports.js';
import { isLocale } from '../../../core/locales.js';
import type { Instant } from '../../../core/time.js';
import { type CompiledQueries, inTransaction } from '../../database.js';
import type { Database, UsersTable } from '../../schema.js';
import { isUniqueViolation } from '../errors.js';

export const USER_COLUMNS = ['id', 'username', 'nickname', 'language', 'time_zone', 'status', 'bio', 'member', 'level', 'xp', 'created_at', 'updated_at', 'status_changed_at'] as const;

export function toUser(row: Pick<Selectable<UsersTable>, (typeof USER_COLUMNS)[number]>): User {
  return {
    id: row.id,
    username: row.username,
    nickname: row.nickname ?? row.username,
    language: isLocale(row.language) ? row.language : null,
    timeZone: row.time_zone,
    status: row.status as UserStatus,
    bio: row.bio,
    member: Boolean(row.member),
    level: row.level,
    xp: row.xp,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    statusChangedAt: row.status_changed_at,
  };
}

const userById = (db: Kysely<Database>) => db.selectFrom('users').select(USER_COLUMNS).where('id', '=', 0);

export class KyselyUserStore implements UserStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async create(user: NewUser, now: Instant): Promise<User> {
    try {
      const row = await this.db.insertInto('users').values({
        username: user.username,
        username_key: user.username.toLowerCase(),
        nickname: user.nickname ?? null,
        language: user.language ?? null,
        time_zone: user.timeZone ?? null,
        password_hash: user.passwordHash,
        status: 'active',
        bio: user.bio,
        member: user.member ? 1 : 0,
        level: user.level,
        xp: user.xp,
        created_at: now,
        updated_at: now,
        status_changed_at: now,
      }).returning(USER_COLUMNS).executeTakeFirstOrThrow();
      return toUser(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`username "${user.username}" is taken`);
      throw error;
    }
  }

  async findById(id: number): Promise<User | undefined> {
    const row = await this.queries.first(this.db, userById, [id]);
    return row && toUser(row);
  }

  async findByUsername(username: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').select(USER_COLUMNS)
      .where('username_key', '=', username.toLowerCase()).executeTakeFirst();
    return row && toUser(row);
  }

  async findCredentials(username: string): Promise<{ user: User; passwordHash: string } | undefined> {
    const row = await this.db.selectFrom('users').select([...USER_COLUMNS, 'password_hash'])
      .where('username_key', '=', username.toLowerCase()).executeTakeFirst();
    return row && { user: toUser(row), passwordHash: row.password_hash };
  }

  async setStatus(id: number, status: UserStatus, now: Instant, from?: UserStatus): Promise<User | undefined> {
    // Entering or leaving `active` moves `status_changed_at`, in the write that changes the status,
    // so the instant the account's tokens ended is never another write's (`User.statusChangedAt`).
    const crosses = status === 'active' ? sql<boolean>`status <> 'active'` : sql<boolean>`status = 'active'`;
    let query = this.db.updateTable('users').set({
      status, updated_at: now, status_changed_at: sql<number>`case when ${crosses} then ${now} else status_changed_at end`,
    }).where('id', '=', id);
    if (from !== undefined) query = query.where('status', '=', from);
    const row = await query.returning(USER_COLUMNS).executeTakeFirst();
    return row && toUser(row);
  }

  async updateProfile(id: number, changes: ProfileChanges, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('users').set({
      ...(changes.bio !== undefined ? { bio: changes.bio } : {}),
      ...(changes.nickname !== undefined ? { nickname: changes.nickname } : {}),
      ...(changes.language !== undefined ? { language: changes.language } : {}),
      ...(changes.timeZone !== undefined ? { time_zone: changes.timeZone } : {}),
      updated_at: now,
    }).where('id', '=', id).where('status', '=', 'active').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  holdActive(id: number): Promise<boolean> {
    return this.hold(id, '=', 'active');
  }

  holdUnlessDeleted(id: number): Promise<boolean> {
    return this.hold(id, '<>', 'deleted');
  }

  private async hold(id: number, comparison: '=' | '<>', status: UserStatus): Promise<boolean> {
    const query = this.db.selectFrom('users').select('id').where('id', '=', id).where('status', comparison, status);
    // SQLite runs one transaction at a time: its read is already the status the writes go with.
    // Not FOR SHARE: a share lock joins those already on the row without queueing behind a
    // deletion's status UPDATE waiting for them (PostgreSQL's README.tuplock), so a stream of
    // overlapping writes starved the deletion until its statement timed out. FOR NO KEY UPDATE
    // conflicts with the UPDATE and itself, so each waits its turn in the lock manager's queue;
    // the FOR KEY SHARE of a foreign key's insert still passes it.
    const row = await (this.postgres ? query.forNoKeyUpdate() : query).executeTakeFirst();
    return row !== undefined;
  }

  async eraseProfile(id: number, now: Instant): Promise<void> {
    await this.db.updateTable('users').set({ bio: '', nickname: null, updated_at: now }).where('id', '=', id).execute();
    await this.db.deleteFrom('avatars').where('user_id', '=', id).execute();
  }

  async setPasswordHash(id: number, passwordHash: string, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: now })
      .where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async rehashPassword(id: number, stored: string, rehashed: string): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ password_hash: rehashed })
      .where('id', '=', id).where('password_hash', '=', stored).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async list(options: { afterId: number; limit: number; status?: UserStatus }): Promise<User[]> {
    let query = this.db.selectFrom('users').select(USER_COLUMNS).where('id', '>', options.afterId);
    if (options.status !== undefined) query = query.where('status', '=', options.status);
    const rows = await query.orderBy('id').limit(options.limit).execute();
    return rows.map(toUser);
  }

  async setAvatar(userId: number, contentType: string, image: Uint8Array, now: Instant): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      // The pages address the avatar by this version: a new image is a new address, never a
      // cached old one. Written first, while the account is active: the row stays locked until
      // the image is in, so a deletion racing the upload erases it or is seen here.
      const active = await trx.updateTable('users').set({ updated_at: now }).where('id', '=', userId).where('status', '=', 'active').executeTakeFirst();
      if (Number(active.numUpdatedRows) !== 1) return false;
      // Checked: the core had it encoded anew (`checkAvatarUpload`), so the data step of the
      // avatar migrations (`reencode-stored-avatars.ts`) passes it by.
      const values = { content_type: contentType, image, updated_at: now, metadata_checked: now };
      await trx.insertInto('avatars').values({ user_id: userId, ...values })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
        .execute();
      return true;
    });
  }

  async findAvatar(userId: number): Promise<Avatar | undefined> {
    const row = await this.db.selectFrom('avatars').select(['content_type', 'image', 'updated_at'])
      .where('user_id', '=', userId).executeTakeFirst();
    return row && { contentType: row.content_type, image: new Uint8Array(row.image), updatedAt: row.updated_at };
  }
}
