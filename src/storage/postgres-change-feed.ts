/**
 * Knows when the tables a page of posts reads (`posts`, `users`, `categories`) may have changed in
 * a PostgreSQL database, by this process or any other, so that a page read since then can be
 * trusted without reading it again (`CompiledQueries.rememberedAnswer`, issue 35 item 3): SQLite's
 * `SqliteWriteWatch` does the same from `data_version`, which PostgreSQL has no counterpart of.
 *
 * Every statement that writes what a page shows of those tables, whoever sends it (an instance,
 * the command line, `psql`, a bulk load), makes the database notify `CHANGES_CHANNEL` with the
 * table's schema, from a statement trigger (migration 2026-12-02-0010): a post written, published,
 * moved or removed, an author renamed or suspended, a category. PostgreSQL sends a notification to
 * every listening connection when the writing transaction commits, and never for one rolled back
 * (https://www.postgresql.org/docs/current/sql-notify.html). This process listens on a connection
 * of its own, and a notification for the tables' schema moves the generation, so every page
 * remembered before it is read again. Its own writes move it as soon as they commit (`written`),
 * without waiting for their notification, so a member who publishes reads the new post on the next
 * request. Another instance's commit counts from the moment its notification arrives: about a
 * round trip to the database after the commit, as SQLite's watch sees another connection's commit
 * from the next turn of the event loop.
 *
 * The counts (likes, comments, views) are not announced: a commit that carries a notification
 * waits for every other such commit of the database (PostgreSQL serialises them), and a like is
 * the commonest write (helper-229: 8 connections liking at once committed 380 times a second
 * announced, 1,340 not). So the generation also moves at every heartbeat, every `HEARTBEAT_MS`:
 * no page is kept longer than that, and a count another instance changed shows within it (this
 * instance's own count changes move it at once, as every write of it does).
 *
 * Nothing is trusted unless notifications are known to arrive: the generation is `undefined` (the
 * page is read afresh, as before this feed) until a notification this process sent through the
 * pool came back on the listening connection, and again from the moment the listening connection
 * is lost or a heartbeat has not come back by the next heartbeat. The connection is dropped and
 * opened anew once a heartbeat the pool sent a whole heartbeat before has not been heard, and kept
 * while the pool has not sent it: a pool too busy to send one within a heartbeat says nothing
 * against the connection. A pooler that hands each transaction to another server
 * connection (PgBouncer's transaction mode) delivers no notification to a listener, so behind one
 * nothing is ever remembered.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type Log, QUIET } from '../core/log.js';

/** The channel the statement triggers notify, with the changed table's schema as the payload. */
export const CHANGES_CHANNEL = 'svc_community_changed';

/**
 * How often a heartbeat notification is sent through the pool, and how long one may take to come
 * back before nothing remembered is trusted. Each heartbeat also moves the generation, so no page
 * is kept longer than this, a listening connection that stopped hearing without closing (a
 * half-open socket, a pooler in between) included.
 */
export const HEARTBEAT_MS = 5_000;

/**
 * How long after losing its connection the feed listens again, at the earliest; doubled at each
 * loss in a row up to `RECONNECT_MOST_MS`, so a server refusing connections (too many clients) or
 * a pooler that never delivers is not asked again every second forever (helper-230).
 */
const RECONNECT_MS = 1_000;
const RECONNECT_MOST_MS = 30_000;

/**
 * Heartbeats a heartbeat still on its way through the pool is waited for before another is sent:
 * the pool's own timeouts end a statement before then, and a promise that never settled must not
 * keep the feed distrusted for good (helper-231).
 */
const POOL_WAIT_BEATS = 2;
/**
 * Beats after the pool sent a heartbeat by which this connection must have heard it: the beat
 * right after may come a millisecond before the notification does (helper-231), the one after
 * that is a whole heartbeat later.
 */
const HEARD_WITHIN_BEATS = 2;

/**
 * How long closing waits for the listening connection to end politely before its socket is
 * destroyed: a peer gone silent never answers, and a shutdown must not wait for it (helper-229).
 */
const CLOSE_WAIT_MS = 1_000;

/** What the feed needs of the database: a listening connection of its own, and a statement through the pool. */
export interface ChangeFeedLinks {
  /** A new client, not yet connected, for the listening connection. */
  listener(): pg.Client;
  /**
   * Runs `select pg_notify(channel, payload)` through the pool and answers the schema of the
   * tables the pool's statements read (`posts`' schema): not `current_schema()`, which a schema
   * made later ahead of it on the search path would change while the tables stay (helper-229).
   */
  notifyThroughPool(channel: string, payload: string): Promise<string>;
}

/** A notification sent through the pool to learn that the listening connection hears them. */
interface Heartbeat {
  payload: string;
  /** The listening connection heard it. */
  heard: boolean;
  /** The schema of the tables (`posts`'), once the pool answered: the notification was sent. */
  schema: string | undefined;
  /** The pool could not send it. */
  failed: boolean;
  /** The beat (`#beats`) it was handed to the pool at. */
  askedAt: number;
  /** The beat during which the pool answered it, once it did. */
  answeredAt: number | undefined;
}

export class PostgresChangeFeed {
  #generation = 0;
  /** Heartbeats so far, each `HEARTBEAT_MS` apart. */
  #beats = 0;
  /** Notifications are known to arrive: the last heartbeat came back and the listener is connected. */
  #trusted = false;
  /** The schema whose changes count (the tables'), once a heartbeat has told it. */
  #schema: string | undefined;
  /** The heartbeat sent and not yet settled, if any. */
  #awaited: Heartbeat | undefined;
  #client: pg.Client | undefined;
  /** `#client` listens: its LISTEN is done, so a heartbeat sent now can be heard. */
  #listening = false;
  /** Connections lost in a row since notifications were last known to arrive. */
  #losses = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #reconnect: NodeJS.Timeout | undefined;
  #started = false;
  #closed = false;
  #log: Log = QUIET;
  /** Why nothing is trusted, once it was said in the log; cleared when trusted again. */
  #distrustSaid = false;

  constructor(private readonly links: ChangeFeedLinks) {}

  /**
   * A number that moves with every change to the watched tables this process has heard of, or
   * `undefined` while notifications are not known to arrive (nothing may be trusted). The first
   * call starts listening.
   */
  generation(): number | undefined {
    if (!this.#started) this.#start();
    return this.#trusted ? this.#generation : undefined;
  }

  /** Where losing and regaining trust is said from now on: the server's log. */
  reportTo(log: Log): void {
    this.#log = log;
  }

  /** This process committed a write to a watched table: what was read before it is read again. */
  written(): void {
    this.#generation++;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#reconnect);
    this.#awaited = undefined;
    this.#distrust(undefined);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await endWithin(client, CLOSE_WAIT_MS);
  }

  #start(): void {
    this.#started = true;
    this.#heartbeat = setInterval(() => this.#beat(), HEARTBEAT_MS).unref();
    void this.#listen();
  }

  async #listen(): Promise<void> {
    if (this.#closed) return;
    const client = this.links.listener();
    this.#client = client;
    client.on('notification', (message) => {
      // What a lost connection still hands over says nothing of what the new one hears.
      if (this.#client === client) this.#heard(message.payload ?? '');
    });
    const lost = () => this.#drop(client, 'the connection listening for changes to posts was lost');
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`listen ${CHANGES_CHANNEL}`);
      // A role's or database's idle_session_timeout (PostgreSQL 14 and later) would end this
      // connection, which only listens, every few seconds (helper-229).
      await client.query(`select set_config('idle_session_timeout', '0', false) where current_setting('server_version_num')::int >= 140000`);
    } catch {
      lost();
      return;
    }
    if (this.#client !== client) return;
    // A heartbeat sent while this connection was still connecting could never be heard on it.
    this.#listening = true;
    this.#awaited = undefined;
    this.#beat();
  }

  /** Stops hearing on `client`, if it is the listening connection: nothing is trusted, and it listens again on a new one. */
  #drop(client: pg.Client, why: string): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening = false;
    this.#awaited = undefined;
    this.#distrust(why);
    void endWithin(client, CLOSE_WAIT_MS);
    const wait = Math.min(RECONNECT_MS * 2 ** this.#losses, RECONNECT_MOST_MS);
    this.#losses++;
    if (!this.#closed) this.#reconnect = setTimeout(() => void this.#listen(), wait).unref();
  }

  /**
   * Sends a heartbeat through the pool, and moves the generation: no page is kept longer than a
   * heartbeat. One not back by the next beat leaves nothing trusted until it is. It is waited for
   * while the pool has not sent it (helper-230's note: a pool saturated for a heartbeat dropped a
   * listener that was fine), up to `POOL_WAIT_BEATS`, and while the pool sent it less than a
   * whole heartbeat ago (helper-231: one sent just before the beat may be a millisecond from
   * being heard). One the pool sent a whole heartbeat ago and this connection has not heard means
   * notifications stopped arriving on it: it is dropped for a new one.
   */
  #beat(): void {
    const client = this.#client;
    if (client === undefined || !this.#listening) return;
    this.#beats++;
    const awaited = this.#awaited;
    if (awaited !== undefined) {
      const sent = awaited.answeredAt;
      if (sent !== undefined && this.#beats - sent >= HEARD_WITHIN_BEATS) {
        this.#drop(client, `a notification sent through the pool was not heard back within ${HEARTBEAT_MS} ms (a pooler in transaction mode delivers none)`);
        return;
      }
      this.#distrust(sent !== undefined
        ? `a notification sent through the pool was not heard back by the next heartbeat`
        : `the pool did not send a heartbeat within ${HEARTBEAT_MS} ms (the pool busy, or the database unreachable)`);
      if (sent !== undefined || (!awaited.failed && this.#beats - awaited.askedAt < POOL_WAIT_BEATS)) return;
    }
    this.#generation++;
    const beat: Heartbeat = {
      payload: `heartbeat ${randomBytes(16).toString('hex')}`, heard: false, schema: undefined, failed: false, askedAt: this.#beats, answeredAt: undefined,
    };
    this.#awaited = beat;
    this.links.notifyThroughPool(CHANGES_CHANNEL, beat.payload).then((schema) => {
      beat.schema = schema;
      beat.answeredAt = this.#beats;
      this.#settle(beat);
    }, () => {
      beat.failed = true;
    });
  }

  #heard(payload: string): void {
    const beat = this.#awaited;
    if (beat !== undefined && payload === beat.payload) {
      beat.heard = true;
      this.#settle(beat);
    } else if (this.#schema === undefined || payload === this.#schema) {
      // Another schema's tables (another deployment, a test) share the database's channels.
      this.#generation++;
    }
  }

  /** A heartbeat both heard back and answered by the pool: notifications arrive, for the schema it names. */
  #settle(beat: Heartbeat): void {
    if (beat !== this.#awaited || !beat.heard || beat.schema === undefined) return;
    this.#awaited = undefined;
    this.#schema = beat.schema;
    if (this.#trusted) return;
    // Nothing read while notifications were not known to arrive is taken for current.
    this.#generation++;
    this.#trusted = true;
    this.#losses = 0;
    if (this.#distrustSaid) this.#log.info({}, 'changes to posts are heard again: pages of posts are remembered again');
    this.#distrustSaid = false;
  }

  /** Nothing remembered is trusted from now on, for `why` (said once until trusted again; none on close). */
  #distrust(why: string | undefined): void {
    this.#trusted = false;
    this.#generation++;
    if (why === undefined || this.#distrustSaid) return;
    this.#distrustSaid = true;
    this.#log.warn({ reason: why }, 'changes to posts are not heard: pages of posts are read afresh until they are');
  }
}

/**
 * Ends `client` politely, or destroys its socket after `ms`: `end` waits for the server to close
 * the connection, which a peer gone silent never does.
 */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.connection.stream.destroy();
      resolve();
    }, ms).unref();
  });
  await Promise.race([client.end().catch(() => {}), late]);
  clearTimeout(timer);
}
