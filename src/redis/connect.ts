/**
 * The service's connection to Redis (REDIS_URL), shared by the rate limiter and the DPoP replay
 * cache, with the guards both need: every command has a bounded timeout and is tried once; the
 * client reconnects for ever, at most every 2 s; and while Redis is known to be down its users are
 * told so (`ask` answers `undefined` without asking), so no request waits for a timeout, and each
 * answers from its fallback (the limiter from memory, the replay cache from the database) until
 * Redis answers again. The outage and the return are logged once each. ioredis is loaded on the
 * first connection: without REDIS_URL its modules never take memory (docs/performance.md,
 * decision 19).
 *
 * A stall (Redis frozen, or a partition that drops packets while the connection stays open) is
 * not seen by the socket: the client stays 'ready' for minutes. So a command that Redis does not
 * answer while the connection looks ready drops that connection (`disconnect(true)`), Redis is
 * skipped until a new connection answers, and ioredis's reconnection is the probe: each attempt's
 * handshake has the same timeout (its TCP connection, 1 s at least). All these timeouts, and the
 * start's check (`checkRedisDatabase`), are ours (`afterLoopTime`), not ioredis's
 * `commandTimeout`, `socketTimeout` and `connectTimeout`: those are plain timers, and once the
 * event loop was held past them (synchronous work, a long GC, a loaded host) Node runs them
 * before it reads the socket, where Redis's answer waits: an answered command would be taken for
 * a stall, a connection made for one not made, and the instance would count its rate limits alone
 * until Redis is back. An outage ends only when a script sent alone on a new connection at once,
 * with what the users send (`RedisUse`), is answered, not at its handshake (requests keep to their
 * fallback until then): a Redis that pauses writes (CLIENT PAUSE WRITE, in a failover) answers
 * the handshake and not a script, and would otherwise be logged back and gone twice a second, and
 * /readyz would say 'redis' half the time while requests wait for the timeout. Decided over keeping the
 * connection and sending PINGs on it: after a partition the old connection may be dead for good
 * (Redis restarted or failed over) while a new one works at once. Unanswered commands are not
 * resent on the new connection: each was already answered from the fallback. For the same reason
 * a command asked before a connection is ready waits for it only until its timeout, or until that
 * connection closes, and is then withdrawn, never sent; sent once it is ready, it has its whole
 * timeout for the answer, which a shorter wait would take for a stall. An error Redis answers
 * with (out of memory, a script error, LOADING) leaves the connection as it is: that request uses
 * its fallback, and the outage ends at the next command Redis answers. A permission it refuses
 * (`NOPERM`: REDIS_URL's ACL user changed since the start) is no outage and is logged as what it
 * is, once: only the user refused (`RedisUse`) keeps to its fallback, the other to Redis, and
 * what it sends is tried again every 2 s until Redis allows it. A write refused as a replica
 * (`READONLY`: failed over), or a new connection's probe or the ROLE asked every 2 s on the
 * connection in use that finds one by its role (a replica that takes writes), is logged as such,
 * once; Redis is skipped meanwhile (`reachesReplica`: /readyz names it), and each new
 * connection, every 2 s, is probed as after an outage. So is a Sentinel found so (REDIS_URL's
 * name moved to one). A Redis found refusing so that then refuses connections is gone: an outage,
 * told as one (`unreachable`).
 * docs/operations.md, "Metrics and alerts".
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

export interface RedisLogger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface GuardedRedisOptions {
  /** Longest wait for one command, in milliseconds (500 when not given). */
  commandTimeoutMs?: number | undefined;
  logger?: RedisLogger | undefined;
  /** What the users of the connection do while Redis is away, for the log line; the `uses`' own words when not given. */
  meanwhile?: string | undefined;
  /** Its users and what each sends (`RedisUse`), run on a new connection before Redis is used again after an outage, and while Redis refuses one. */
  uses?: readonly RedisUse[] | undefined;
}

/**
 * How a user of Redis (the limiter, the replay cache) gets its connection: the service's shared
 * one (`redis`), or one of its own for `url` (tests, the command line), which it closes.
 */
export type RedisConnection = { redis: GuardedRedis } | { url: string; commandTimeoutMs?: number; logger?: RedisLogger };

/** The connection `options` names, for a user that sends `use`; `owned` when it is made here, for its user to close. */
export function connectionOf(options: RedisConnection, use: RedisUse): { redis: GuardedRedis; owned: boolean } {
  if ('redis' in options) return { redis: options.redis, owned: false };
  return { redis: new GuardedRedis(options.url, { uses: [use], commandTimeoutMs: options.commandTimeoutMs, logger: options.logger }), owned: true };
}

/**
 * What REDIS_URL names that the Redis refuses, by its answer to the connection's handshake: the
 * SELECT of a database it does not have (`ERR DB index is out of range`), or the credentials
 * (`WRONGPASS` to a password or user it does not know, `NOAUTH` when it wants one and REDIS_URL
 * gives none); `undefined` for any other failure. Redis's answer never holds the password (the
 * error's `command` does: it is never logged).
 */
function refusedSetting(error: unknown): 'database' | 'credentials' | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  // First: a Redis without HELLO (before 6) is sent AUTH and SELECT at once, and refuses both.
  if (/^(?:NOAUTH|WRONGPASS)\b/.test(error.message)) return 'credentials';
  return (error as { command?: { name?: unknown } }).command?.name === 'select' ? 'database' : undefined;
}

/**
 * One user of Redis (the limiter, the replay cache) and what it sends, run by the start's check
 * (`checkRedisDatabase`), on a new connection after an outage, and every 2 s while Redis refuses
 * it (`GuardedRedis`), on a key named as the user's own are (`svc:rl:…`, `svc:dpop:…`) that
 * expires within seconds: Redis refuses it (`refusedCommand`) when REDIS_URL's ACL user may not
 * run those commands or touch those keys, or it does not have a command (renamed). Each use has
 * its own refusal: the other keeps to Redis meanwhile.
 */
export interface RedisUse {
  /** Its user, for the log lines: 'the rate limiter'. */
  name: string;
  /** What its user does while Redis is away or refuses it, for the log lines. */
  meanwhile: string;
  /** Its commands, issued together (`sendUses`), not each after the answer to the one before. */
  send(client: Redis): Array<Promise<unknown>>;
}

/**
 * Sends `lua` both ways the service's scripts reach Redis: EVAL, which ioredis sends first on each
 * connection, then EVALSHA of the same script (which the EVAL loads, Redis answering in order),
 * sent from then on. A user without one of the two would pass a check that ran the other, and be
 * refused at run time.
 */
export function scriptBothWays(client: Redis, lua: string, keys: string[], args: Array<string | number>): Array<Promise<unknown>> {
  return [
    client.eval(lua, keys.length, ...keys, ...args),
    client.evalsha(createHash('sha1').update(lua).digest('hex'), keys.length, ...keys, ...args),
  ];
}

/**
 * Sends what `uses` send, all at once: ioredis writes commands without waiting for the answers
 * before, so they take one round trip, as a request's command does, and fit its timeout on a
 * Redis far away (one after the other, the eight of the service's would need eight round trips: 100 ms
 * away, longer than the 500 ms that a new connection's probe has, which would fail for ever).
 * Resolves to what Redis refused each use (`refusedCommand`: the first of its commands it refused,
 * Redis answering in order), `undefined` for a use it answered; rejects with any other error (a
 * replica's READONLY, LOADING), which concerns every use.
 */
async function sendUses(client: Redis, uses: readonly RedisUse[]): Promise<Array<Error | undefined>> {
  const settled = await Promise.allSettled(uses.map((use) => Promise.all(use.send(client))));
  const errors = settled.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error) : undefined));
  const other = errors.find((error) => error !== undefined && refusedCommand(error) === undefined);
  if (other !== undefined) throw other;
  return errors;
}

/**
 * What Redis refuses, with the log lines' words: what it refuses (`what`), what ends that
 * (`until`), and the line that says it ended (`again`).
 */
interface Refusal {
  what: string;
  until: string;
  again: string;
}

/**
 * A command the service sends that Redis refuses REDIS_URL's ACL user, by its answer, with the log
 * lines' words: a command (`NOPERM … the 'evalsha' command`), the keys (`NOPERM … the keys`), a
 * command a script runs (Redis 7.0 answers that one with ERR, not NOPERM), or one this Redis does
 * not have (`rename-command`, as managed Redis has some: `ERR unknown command`, or from a script
 * `ERR Unknown Redis command called from script`); `undefined` for any other answer.
 */
function refusedCommand(error: unknown): Refusal | undefined {
  if (!(error instanceof Error)) return undefined;
  const unknown = /^ERR unknown command [`']([\w|-]+)[`']/.exec(error.message)?.[1]?.toUpperCase();
  if (unknown !== undefined) return { what: `Redis does not know the command ${unknown} (renamed or disabled)`, until: 'it has it', again: `Redis has the command ${unknown} again` };
  if (/^ERR Unknown Redis command called from script/.test(error.message)) {
    return { what: 'Redis does not know a command the service\'s scripts run (renamed or disabled)', until: 'it has it', again: 'Redis has the commands the service\'s scripts run again' };
  }
  const refused = (permission: string) => ({ what: `Redis refuses REDIS_URL's user ${permission}`, until: 'it allows it', again: `Redis allows REDIS_URL's user ${permission} again` });
  if (/^ERR The user executing the script can't run this command/.test(error.message)) return refused('a command the service\'s scripts run');
  if (!/^NOPERM\b/.test(error.message)) return undefined;
  const command = /'([\w|-]+)' command/.exec(error.message)?.[1];
  if (command !== undefined) return refused(`the command ${command.toUpperCase()}`);
  return refused(/\bkeys?\b/.test(error.message) ? 'the service\'s keys' : 'a command the service sends');
}

/**
 * Whether `error` is a replica's answer: its role (`wrongRole`), `READONLY` to a write, or
 * `MASTERDOWN` from one cut off from its primary, alone or, before Redis 7, inside a script's
 * error (`ERR Error running script … -READONLY …`). At start REDIS_URL names a replica; running, a failover left the old primary
 * one, while REDIS_URL's name points at the new primary.
 */
function answeredAsReplica(error: unknown): boolean {
  return error instanceof ReplicaRole || (error instanceof Error && /^(?:ERR Error running script\b.*?-)?(?:READONLY|MASTERDOWN)\b/s.test(error.message));
}

const ANSWERED_AS_REPLICA: Refusal = { what: 'REDIS_URL reaches a replica', until: 'it reaches a primary', again: 'REDIS_URL reaches a primary again' };

/** A Sentinel found on a connection once running (`SentinelRole`: REDIS_URL's name moved to one), met as a replica is. */
const ANSWERED_AS_SENTINEL: Refusal = { what: 'REDIS_URL reaches a Redis Sentinel', until: 'it reaches a primary', again: 'REDIS_URL reaches a primary again' };

/** A Redis that says it is a replica (`wrongRole`), with its answer to ROLE. */
class ReplicaRole extends Error {}

/**
 * A Sentinel that says so to ROLE (`wrongRole`): REDIS_URL names the monitor of a primary, which
 * serves no data (it refuses EVAL as an unknown command, which would read as one renamed away).
 */
class SentinelRole extends Error {}

/**
 * What ROLE tells of a Redis the service may not use: a replica's role, or a Sentinel's;
 * `undefined` from a primary. A replica set `replica-read-only no`
 * takes writes and answers no READONLY, yet its primary replaces them at the next sync, and the
 * instances on the primary count apart meanwhile: only its role tells it. A user that may not run
 * ROLE (ACL without `@admin` or `@dangerous`, as managed Redis often has it), or a Redis that
 * renamed it, tells nothing: a replica is then known by its READONLY alone, so a writable one is
 * taken for a primary (docs/operations.md). Any other failure is its writes' too (`sendChecks`).
 */
async function wrongRole(client: Redis): Promise<ReplicaRole | SentinelRole | undefined> {
  return wrongRoleIn(await client.role().catch(() => undefined));
}

/** `wrongRole`, from Redis's answer to ROLE (`undefined` when it gave none). */
function wrongRoleIn(role: unknown): ReplicaRole | SentinelRole | undefined {
  if (!Array.isArray(role)) return undefined;
  if (role[0] === 'sentinel') return new SentinelRole(`ROLE answers sentinel, monitoring ${Array.isArray(role[1]) && role[1].length > 0 ? role[1].map(String).join(', ') : 'no primary'}`);
  // Redis and Valkey answer `slave`; Dragonfly's replica answers `replica`.
  if (role[0] !== 'slave' && role[0] !== 'replica') return undefined;
  return new ReplicaRole(`ROLE answers ${String(role[0])}, of ${String(role[1])}:${String(role[2])}`);
}

/**
 * What the start's check and a new connection's probe send: ROLE and what `uses` send
 * (`sendUses`), in one round trip. Rejects with a replica's or a Sentinel's role before any
 * answer to its writes, which a writable replica takes.
 */
async function sendChecks(client: Redis, uses: readonly RedisUse[]): Promise<Array<Error | undefined>> {
  const role = wrongRole(client);
  const sent = sendUses(client, uses);
  const wrong = await role;
  if (wrong === undefined) return sent;
  sent.catch(() => {});
  throw wrong;
}

/**
 * Whether `error` is the answer of a Redis that serves no command yet: `LOADING` its dataset
 * (restarted), or `BUSY` running a script past its time limit, which answers even the handshake's
 * SELECT so, not only what the service sends.
 */
function notReady(error: unknown): boolean {
  return error instanceof Error && /^(?:LOADING|BUSY)\b/.test(error.message);
}

/** How long the start waits for a Redis that is not ready (`notReady`) to check it; and how often it asks meanwhile. */
const READY_WAIT_MS = 30_000;
const NOT_READY_AGAIN_MS = 250;

/**
 * What the start's check found of REDIS_URL: `refused` names what Redis refused, with its answer;
 * `not ready` is a Redis that was still LOADING or BUSY once the wait was over, with its answer.
 */
export type RedisCheck =
  | { outcome: 'ok' | 'unreachable' }
  | { outcome: 'not ready'; reason: string }
  | { outcome: 'refused'; refused: RedisRefusal; reason: string; db: number };

/** What of REDIS_URL the start's check found refused (`RedisCheck`). */
export type RedisRefusal = 'database' | 'credentials' | 'permissions' | 'replica' | 'sentinel';

/**
 * Whether the Redis at `url` takes what REDIS_URL names, asked on a connection of its own:
 * `refused` with Redis's answer when it does not have the database its path names, refuses its
 * credentials, its user may not run what the service sends (`uses`, each run once), or it is a
 * replica (its ROLE, or READONLY to the writes they make); `ok` when it takes all that, `unreachable` when no
 * answer came within `timeoutMs`. The start asks it, so such a REDIS_URL is a bad setting, not a
 * fallback to memory for ever. A Redis not ready yet (`notReady`) is asked again on a new
 * connection every 250 ms for up to `readyWithinMs`: its answer then says nothing of REDIS_URL.
 * `notReadyBefore`: this check asks again after one that found Redis not ready.
 */
export async function checkRedisDatabase(url: string, uses: readonly RedisUse[], timeoutMs = 1000, readyWithinMs = READY_WAIT_MS, notReadyBefore = false): Promise<RedisCheck> {
  const waitUntil = performance.now() + readyWithinMs;
  for (let loading = notReadyBefore; ; loading = true) {
    const checked = await checkOnce(url, uses, timeoutMs);
    // A Redis loading its dataset serves its clients only between chunks of it: one answer slower
    // than `timeoutMs` then is that, not Redis gone, and the check is not skipped for it.
    const waiting = checked.outcome === 'not ready' || (loading && checked.outcome === 'unreachable');
    if (!waiting || performance.now() + NOT_READY_AGAIN_MS > waitUntil) return checked;
    await new Promise((resolve) => setTimeout(resolve, NOT_READY_AGAIN_MS));
  }
}

/** `checkRedisDatabase`, asked once. */
async function checkOnce(url: string, uses: readonly RedisUse[], timeoutMs: number): Promise<RedisCheck> {
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  // The connection and its handshake are timed together, by `afterLoopTime`: ioredis's timers
  // would take a Redis answering while the start held the loop for unreachable.
  const client = new Client(url, { ...UNTIMED, ...UNCHECKED, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const db = client.options.db ?? 0;
  let cancel = () => {};
  try {
    return await new Promise((resolve) => {
      cancel = afterLoopTime(timeoutMs, () => resolve({ outcome: 'unreachable' }));
      const refused = (what: RedisRefusal, error: Error) => resolve({ outcome: 'refused', refused: what, reason: error.message, db });
      client.on('error', (error: Error) => {
        // BUSY answers the handshake's SELECT too: no database refused.
        if (notReady(error)) return resolve({ outcome: 'not ready', reason: error.message });
        const setting = refusedSetting(error);
        if (setting === undefined) resolve({ outcome: 'unreachable' });
        else refused(setting, error);
      });
      client.on('ready', () => {
        sendChecks(client, uses).then(
          (refusals) => {
            const refusal = refusals.find((error) => error !== undefined);
            if (refusal === undefined) resolve({ outcome: 'ok' });
            else refused('permissions', refusal);
          },
          (error: Error) => {
            if (notReady(error)) resolve({ outcome: 'not ready', reason: error.message });
            else if (answeredAsReplica(error)) refused('replica', error);
            else if (error instanceof SentinelRole) refused('sentinel', error);
            // Any other answer (out of memory, writes paused) is Redis's state now, no setting at fault.
            else resolve({ outcome: 'ok' });
          },
        );
      });
      client.connect().catch(() => {});
    });
  } finally {
    cancel();
    client.disconnect();
  }
}

/**
 * The ioredis options that leave all timing to `afterLoopTime`, or to nothing: no
 * `connectTimeout` (on by default, 10 s), `commandTimeout` or `socketTimeout`, plain timers that
 * fire before the socket is read once the event loop was held past them. And a connection
 * dropped is closed at once (`disconnectTimeout`), not after ioredis's 2 s wait for Redis to
 * close its end: a stalled Redis never does, and the wait would hold the process's exit, and
 * the new connection after a stall, for those 2 s.
 */
const UNTIMED = { connectTimeout: 0, disconnectTimeout: 0 } as const;

/**
 * No ready check: ioredis's is an INFO, which managed Redis often renames or forbids (ACL
 * `-info`), and then its connections are never ready (renamed: an error, each time) or it writes
 * its own warning to the console (forbidden). What the service needs is proved otherwise: at
 * start by running what it sends (`checkRedisDatabase`), and on a connection made after an outage
 * by a script answered before Redis is used again (`GuardedRedis`), which a Redis still LOADING
 * its dataset refuses, as it refuses every request until it is loaded.
 */
const UNCHECKED = { enableReadyCheck: false } as const;

/**
 * Calls `verdict` once `ms` have passed with the event loop free to read sockets; returns what
 * cancels it. A timer alone is not that: once the loop was held past it, Node's next turn runs
 * the timers phase before the poll phase that reads the socket, and an answer already there would
 * come after the verdict. So the verdict is taken in the check phase (`setImmediate`), which
 * follows the poll phase: an answer that arrived meanwhile settles its command first. And the
 * time is counted in tenths of `ms`, each a timer: one that fires late by more than a tenth tells
 * that the loop was held, wherever in the period the hold fell, even one that ended just before
 * or just after the period's end (a single timer, barely late then, would not tell). The command
 * may have been written only as the hold ended (ioredis writes a turn's commands in a later turn,
 * and behind a batch still waiting for its answers), so the count starts again from there, a
 * whole `ms`, once: a loop held time after time is an overloaded instance, which a late verdict
 * would not help. A stall is seen after `ms` and one turn of the loop, as with a timer, and after
 * at most twice `ms` and the holds when the loop is held meanwhile.
 */
function afterLoopTime(ms: number, verdict: () => void): () => void {
  const tenth = ms / 10;
  let again = true;
  let counted = 0;
  let last = performance.now();
  let immediate: NodeJS.Immediate | undefined;
  const tick = () => {
    const now = performance.now();
    const elapsed = now - last;
    last = now;
    if (again && elapsed - tenth > tenth) {
      again = false;
      counted = 0;
    } else {
      counted += elapsed;
    }
    if (counted >= ms) immediate = setImmediate(verdict);
    else timer = setTimeout(tick, Math.min(tenth, ms - counted));
  };
  let timer = setTimeout(tick, Math.min(tenth, ms));
  return () => {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  };
}

/**
 * A script that writes nothing: a Redis pausing its writes does not answer it (`probe`). Its
 * refusal (`refusedCommand`: a user without EVAL, ACL `-@scripting`) is an answer too: Redis
 * serves, and refuses the limiter's scripts alike, which `sendUses` judges for that use alone,
 * where taking it for no answer would keep every use on its fallback for ever.
 */
const answersScripts = (client: Redis) => client.eval('return 1', 0).catch((error: unknown) => {
  if (refusedCommand(error) === undefined) throw error;
});

/** How long after an error answered to a new connection's probe it is sent again (`probe`). */
const PROBE_AGAIN_MS = 1000;

/** How often what a refused use sends is tried again (`recheckLater`), as a refused connection is made again. */
const REFUSED_AGAIN_MS = 2000;

/**
 * How often ROLE is asked on the connection in use (`askRoleLater`): a primary demoted by hand
 * (`REPLICAOF` keeps its clients) and set `replica-read-only no` takes the service's writes
 * without a READONLY, and its new primary replaces them at the next sync; asked every 2 s, the
 * writes lost so are at most those 2 s'.
 */
const ROLE_AGAIN_MS = 2000;

export class GuardedRedis {
  readonly client: Redis;
  private readonly logger: RedisLogger | undefined;
  private readonly meanwhile: string;
  private readonly uses: readonly RedisUse[];
  private readonly isReply: (error: unknown) => boolean;
  /** Longest wait for one command, or for a new connection's handshake, in milliseconds. */
  private readonly timeout: number;
  /** Cancels the timeout of the connection under way (its TCP connection, then its handshake), if any. */
  private connecting: (() => void) | undefined;
  /**
   * The commands asked while the connection is not ready yet, each told (`true`) when it is
   * (`recovered`), and then sent, with the whole timeout for the answer. One told `false`, its
   * timeout past or its connection closed first, is withdrawn, never sent (its caller answers
   * from the fallback), where ioredis's offline queue would send it still, and the limiter count
   * it twice.
   */
  private readonly waiting = new Set<(ready: boolean) => void>();
  private degraded = false;
  /** The refusal of REDIS_URL's settings, or of a replica, told in this outage (`refusal`), if any. */
  private refusalTold: Refusal | undefined;
  /**
   * The uses Redis refuses (`refusedCommand`: a permission of REDIS_URL's user, a command renamed),
   * each told once: that use keeps to its fallback, the others to Redis, until it is answered again.
   */
  private readonly refusedUses = new Map<RedisUse, Refusal>();
  private closed = false;
  /** A command went unanswered and its connection was dropped: skip Redis until the next 'ready'. */
  private dropped = false;
  /** After a stall, the script sent on the new connection is not answered yet: skip Redis until it is. */
  private probing = false;
  /** Connections closed so far: a failure on a connection since closed is not news. */
  private closes = 0;
  private readonly recoveryListeners = new Set<() => void>();
  /** The next ask of ROLE on the connection in use (`askRoleLater`). */
  private roleTimer: NodeJS.Timeout | undefined;
  /** Redis refused ROLE (`refusedCommand`): no more asks of it on the connection in use. */
  private roleRefused = false;

  constructor(url: string, options: GuardedRedisOptions) {
    const timeout = (this.timeout = options.commandTimeoutMs ?? 500);
    this.logger = options.logger;
    this.uses = options.uses ?? [];
    this.meanwhile = options.meanwhile ?? this.uses.map((use) => use.meanwhile).join(' and ');
    const { Redis: Client, ReplyError } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.isReply = (error) => error instanceof ReplyError;
    this.client = new Client(url, {
      // ioredis times nothing (module comment). A command is timed in `send`, and its stall drops
      // the connection there (`failed`), on the connection it happened on, so it is seen as a
      // stall and not as a connection merely closed, whose next handshake would be taken for
      // Redis being back; a connection and its handshake are timed from 'connecting' below.
      ...UNTIMED,
      ...UNCHECKED,
      // A command is settled (rejected) when its connection closes, never carried over to the
      // next one: ioredis otherwise drops the commands still unanswered at a close without
      // settling them (with `autoResendUnfulfilledCommands` off), and its auto-pipeline, which
      // writes a batch only once the previous one is settled, would hold every later command.
      maxRetriesPerRequest: 0,
      // While Redis refuses what REDIS_URL names, every 2 s: each new connection is refused alike
      // until an operator changes Redis (a refused permission drops its connection, `failed`).
      retryStrategy: (times) => (this.refusalTold === undefined ? Math.min(times * 100, 2000) : 2000),
      // A command that timed out was answered from the fallback; sent again it would count twice.
      autoResendUnfulfilledCommands: false,
      // Commands issued in the same tick (concurrent requests) leave in one write (issue 8).
      enableAutoPipelining: true,
    });
    // Without a listener an unreachable Redis would crash the process with an unhandled 'error'.
    this.client.on('error', (error: Error) => {
      if (notReady(error)) {
        // BUSY answers the handshake's SELECT too (`notReady`): Redis serves nothing yet, no
        // database is refused. ioredis would go on, ready, on database 0: dropped, as below.
        this.outage(error);
        return this.drop();
      }
      const refused = refusedSetting(error);
      if (refused === undefined) return this.unreachable(error);
      if (refused === 'credentials') {
        // ioredis drops the connection and tries again (every 2 s at most), refused each time
        // until Redis takes the password again (restarted with another): told once.
        return this.refusal(error, { what: 'Redis refuses the password or user of REDIS_URL', until: 'it takes them', again: 'Redis takes the password and user of REDIS_URL again' });
      }
      // ioredis reports the SELECT of REDIS_URL's database number refused, then goes on, ready,
      // on database 0: another deployment's counters, or whatever else is kept there. This
      // connection is dropped before it is ready, and each new one (every 2 s at most) asks again.
      const db = this.client.options.db;
      this.refusal(error, { what: `REDIS_URL names database ${db}, which this Redis does not have`, until: 'it does', again: `Redis has database ${db}, which REDIS_URL names` });
      this.drop();
    });
    // A connection not made within 1 s (the commands' timeout, if longer) is tried again; then its
    // handshake (HELLO or AUTH, SELECT, CLIENT SETINFO) has the commands' timeout: a Redis that
    // accepts the connection and does not answer it is tried again, as a stalled command is.
    this.client.on('connecting', () => this.timeConnection(Math.max(timeout, 1000), 'connecting', 'connection not made'));
    this.client.on('connect', () => this.timeConnection(timeout, 'connect', 'handshake unanswered'));
    // A connection closed before it was ever ready is an outage too: a Redis at its client limit
    // answers the handshake with an error and closes, and a request waiting for that connection
    // is answered from its fallback now, not at its timeout.
    this.client.on('close', () => {
      this.stopTimingConnection();
      this.closes++;
      this.outage(new Error('connection closed'));
      this.tellWaiting(false);
    });
    this.client.on('ready', () => {
      this.stopTimingConnection();
      if (this.dropped || this.degraded) {
        this.dropped = false;
        return this.probe();
      }
      this.recovered();
    });
    this.askRoleLater();
  }

  /**
   * Asks ROLE on the connection in use in 2 s (`ROLE_AGAIN_MS`), and so on, as a command with its
   * timeout: a replica's answer is met as a READONLY is (`failed`: told, Redis skipped, the
   * connection made again until it reaches a primary). Not in an outage, nor while Redis refuses
   * a replica: a new connection's probe asks it then, and ROLE, which Redis runs while LOADING,
   * would end an outage that still lasts. Decided over ioredis's `reconnectOnError` for READONLY,
   * which resends the command: each was answered from its fallback already, and a count sent
   * again would count twice. A ROLE refused (an ACL user without it, a Redis that renamed it) tells
   * nothing, and asked again every 2 s would fill Redis's ACL LOG: it is asked no more, and a
   * replica is told by its READONLY alone (each new connection's probe still asks it).
   */
  private askRoleLater(): void {
    this.roleTimer = setTimeout(async () => {
      if (this.usable && !this.degraded && this.client.status === 'ready') {
        await this.send(async () => {
          const role: unknown = await this.client.role().catch((error: unknown) => {
            if (refusedCommand(error) !== undefined) this.roleRefused = true;
          });
          const wrong = wrongRoleIn(role);
          if (wrong !== undefined) throw wrong;
        });
      }
      if (!this.closed && !this.roleRefused) this.askRoleLater();
    }, ROLE_AGAIN_MS).unref();
  }

  /**
   * Drops the connection under way, ioredis then making another, if it is still at `status` once
   * `ms` have passed (`afterLoopTime`).
   */
  private timeConnection(ms: number, status: 'connecting' | 'connect', failure: string): void {
    this.connecting?.();
    const connection = this.closes;
    this.connecting = afterLoopTime(ms, () => {
      this.connecting = undefined;
      if (connection !== this.closes || this.closed || this.client.status !== status) return;
      this.outage(new Error(failure));
      this.client.disconnect(true);
    });
  }

  /**
   * After an outage the handshake proves nothing: a Redis pausing its writes (CLIENT PAUSE WRITE,
   * as a failover does) answers it and not a script, one still LOADING its dataset refuses every
   * other command, an ACL user may still lack a permission, and the name may reach the old
   * primary, a replica now. So a script is sent at once, alone, with ROLE and what the users send
   * (`uses`), in one round trip (`sendChecks`) and one command's
   * timeout: its answer ends the outage (`send`), each use's refused or answered telling whether
   * that use may ask Redis (`judge`), and until then
   * requests keep to their fallback without asking, or each would wait for the timeout on a Redis
   * that still pauses (its failure drops this connection too, and the next is probed). An error
   * answered (LOADING) keeps the connection, probed again a second later, as ioredis's ready
   * check would ask again.
   */
  private probe(): void {
    this.probing = true;
    const connection = this.closes;
    const current = () => connection === this.closes && !this.closed && !this.dropped && this.degraded;
    void this.send(async () => (await Promise.all([answersScripts(this.client), sendChecks(this.client, this.uses)]))[1]).then((refusals) => {
      if (refusals !== undefined) this.judge(this.uses, refusals);
      if (refusals !== undefined || !current()) {
        this.probing = false;
        return;
      }
      // Skipped still meanwhile; once this connection is gone, the next one's 'ready' probes it.
      setTimeout(() => current() && this.probe(), PROBE_AGAIN_MS).unref();
    });
  }

  /** Cancels the timeout of the connection under way (`timeConnection`), if any. */
  private stopTimingConnection(): void {
    this.connecting?.();
    this.connecting = undefined;
  }

  /** False while Redis is known to be down: use the fallback without trying. */
  private get usable(): boolean {
    return !this.dropped && !this.probing && (!this.degraded || this.client.status === 'ready');
  }

  /**
   * Calls `listener` each time Redis is back after an outage, when commands go to it again (the
   * replay cache tells it then what the fallback accepted meanwhile); returns what stops that.
   */
  onRecovered(listener: () => void): () => void {
    this.recoveryListeners.add(listener);
    return () => this.recoveryListeners.delete(listener);
  }

  /** Whether an outage was noticed and Redis has not answered since. */
  get isDegraded(): boolean {
    return this.degraded;
  }

  /** Whether Redis was last found a replica (its ROLE or READONLY), and no primary has answered since. */
  get reachesReplica(): boolean {
    return this.refusalTold === ANSWERED_AS_REPLICA;
  }

  /** Whether `use` keeps to its fallback: in an outage, or while Redis refuses it. */
  isDegradedFor(use: RedisUse): boolean {
    return this.degraded || this.refusedUses.has(use);
  }

  /**
   * What Redis answers to `command`, sent for `use`; `undefined` when Redis is known to be down,
   * or refuses `use` (it is not asked), or does not answer in time: the caller then answers from
   * its fallback.
   */
  async ask<T>(command: () => Promise<T>, use?: RedisUse): Promise<T | undefined> {
    if (!this.usable || (use !== undefined && this.refusedUses.has(use))) return undefined;
    return this.send(command, use);
  }

  /** `ask`, Redis usable or not: what it answers to `command` in time, else `undefined`. */
  private async send<T>(command: () => Promise<T>, use?: RedisUse): Promise<T | undefined> {
    // Not sent when its connection is not ready in time: no news of Redis then, as the
    // connection has timeouts of its own (`timeConnection`), and a stall may not be judged on a
    // command that did not go out.
    if (this.client.status !== 'ready' && !(await this.connectionReady())) return undefined;
    const connection = this.closes;
    const outcome = await new Promise<{ answer: T } | { error: unknown }>((settle) => {
      // Once the verdict is taken, a later answer or error of the command is not news: the caller
      // answered from its fallback, and a stall dropped the connection (`failed`).
      const cancel = afterLoopTime(this.timeout, () => settle({ error: new Error('Command timed out') }));
      new Promise<T>((resolve) => resolve(command())).then(
        (answer) => {
          cancel();
          settle({ answer });
        },
        (error: unknown) => {
          cancel();
          settle({ error });
        },
      );
    });
    if ('error' in outcome) {
      this.failed(outcome.error, connection, use);
      return undefined;
    }
    // After an error Redis answered with, no 'ready' follows: an answer is what ends that outage.
    if (this.degraded && !this.dropped && this.client.status === 'ready') this.recovered();
    return outcome.answer;
  }

  /**
   * Whether the connection under way is ready within the commands' timeout (`waiting`), and is
   * ready still: a command waits for it only that long, so its caller waits at most that, and
   * then as long again for the answer.
   */
  private async connectionReady(): Promise<boolean> {
    const told = await new Promise<boolean>((settle) => {
      const tell = (ready: boolean) => {
        cancel();
        this.waiting.delete(tell);
        settle(ready);
      };
      const cancel = afterLoopTime(this.timeout, () => tell(false));
      this.waiting.add(tell);
    });
    return told && this.client.status === 'ready';
  }

  /** Tells the commands waiting for the connection whether it is ready (`waiting`). */
  private tellWaiting(ready: boolean): void {
    for (const tell of this.waiting) tell(ready);
  }

  /**
   * A command failed; `connection` (the count of closes when it was sent) names its connection,
   * `use` what it was sent for.
   */
  private failed(error: unknown, connection: number, use: RedisUse | undefined): void {
    // Sent on a connection closed since: its closing was the news, and a new one may be fine.
    if (connection !== this.closes || this.closed) return;
    const refused = refusedCommand(error);
    // REDIS_URL's user lost a permission since the start (its ACL changed), or its Redis lost a
    // command (restarted with it renamed): no outage, and only that use is refused.
    if (refused !== undefined && use !== undefined) return this.refuse(use, error, refused);
    const notPrimary = answeredAsReplica(error) ? ANSWERED_AS_REPLICA : error instanceof SentinelRole ? ANSWERED_AS_SENTINEL : undefined;
    if (notPrimary !== undefined) {
      // A replica or a Sentinel now: no outage, and told once as what it is. Redis is skipped as
      // in an outage, every user on its fallback, and the connection dropped: each new one (every
      // 2 s, to where REDIS_URL's name points then, not at once as after a stall) runs what the
      // users send before Redis is used again, so no request pays a round trip to be refused meanwhile.
      this.refusal(error, notPrimary);
      return this.drop();
    }
    this.outage(error);
    if (this.isReply(error) || this.dropped || this.client.status !== 'ready') return;
    // Unanswered while the connection looks ready: a stall. Drop it; ioredis connects again.
    this.drop();
  }

  /** Skips Redis until a new connection's script is answered (the 'ready' listener), and makes one. */
  private drop(): void {
    this.dropped = true;
    this.client.disconnect(true);
  }

  /**
   * A connection failed (refused, reset, timed out): an outage, whatever Redis was last found to
   * refuse (a replica, a Sentinel, the password), which no longer answers: /readyz and the log
   * would otherwise name a replica that is gone, and "Redis unreachable" never be said.
   */
  private unreachable(error: unknown): void {
    if (this.refusalTold !== undefined && !this.closed) {
      this.refusalTold = undefined;
      this.degraded = false;
    }
    this.outage(error);
  }

  private outage(error: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    this.warn(error, `Redis unreachable; ${this.meanwhile} until it is back`);
  }

  /**
   * Redis refuses what REDIS_URL names (`refusedSetting`), or is a replica: told once an outage,
   * even one already told (a Redis restarted with another password first closes the connection),
   * and not again at each retry it refuses the same way.
   */
  private refusal(error: unknown, refused: Refusal): void {
    if (this.closed || this.refusalTold?.what === refused.what) return;
    this.degraded = true;
    this.refusalTold = refused;
    this.warn(error, `${refused.what}; ${this.meanwhile} until ${refused.until}`);
  }

  /**
   * Redis refuses `use` (`refusedCommand`): told once, that use alone keeps to its fallback (the
   * others' commands are answered), and what it sends is tried again every 2 s on the connection
   * as it is then (an ACL changed applies to it at once), until answered.
   */
  private refuse(use: RedisUse, error: unknown, refused: Refusal): void {
    if (this.closed || this.refusedUses.has(use)) return;
    this.refusedUses.set(use, refused);
    this.warn(error, `${refused.what}; ${use.meanwhile} until ${refused.until}`);
    this.recheckLater(use, refused);
  }

  /** Tries what `use` sends again in 2 s, and so on, while Redis refuses it as `refused` (a later refusal has its own). */
  private recheckLater(use: RedisUse, refused: Refusal): void {
    setTimeout(async () => {
      if (this.closed || this.refusedUses.get(use) !== refused) return;
      // In an outage the next connection's probe runs it (`probe`).
      if (this.usable) {
        const refusals = await this.send(() => sendUses(this.client, [use]));
        if (refusals !== undefined) this.judge([use], refusals);
      }
      this.recheckLater(use, refused);
    }, REFUSED_AGAIN_MS).unref();
  }

  /** What Redis answered `uses` (`sendUses`): each refused, or granted again if it was refused. */
  private judge(uses: readonly RedisUse[], refusals: ReadonlyArray<Error | undefined>): void {
    uses.forEach((use, i) => {
      const error = refusals[i];
      if (error !== undefined) return this.refuse(use, error, refusedCommand(error)!);
      const refused = this.refusedUses.get(use);
      if (refused === undefined || this.closed) return;
      this.refusedUses.delete(use);
      this.logger?.info({}, `${refused.again}; ${use.name} uses Redis again`);
      for (const listener of this.recoveryListeners) listener();
    });
  }

  private warn(error: unknown, line: string): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.logger?.warn({ reason }, line);
  }

  private recovered(): void {
    // Answered: the listeners below ask Redis at once (the replay cache publishes what the
    // database accepted meanwhile), so requests may too from now on.
    this.probing = false;
    this.tellWaiting(true);
    if (!this.degraded || this.closed) return;
    this.degraded = false;
    this.logger?.info({}, this.refusalTold?.again ?? 'Redis is reachable again');
    this.refusalTold = undefined;
    for (const listener of this.recoveryListeners) listener();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.roleTimer);
    this.stopTimingConnection();
    this.client.disconnect();
  }
}
