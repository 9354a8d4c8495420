/**
 * When `PostgresChangeFeed` trusts what was remembered: only while a heartbeat it sent through the
 * pool comes back on its listening connection, which a pooler handing each transaction to another
 * server connection never does, for at most one heartbeat, and only for changes of its tables'
 * schema. Its work with a real database is test/storage/postgres-remembered-pages.test.ts.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, mock, test } from 'node:test';
import type pg from 'pg';
import { CHANGES_CHANNEL, HEARTBEAT_MS, PostgresChangeFeed } from '../../src/storage/postgres-change-feed.js';

/** A listening connection that hears what the test delivers; `silent`, a peer that never answers its end. */
class Listener extends EventEmitter {
  listened: string[] = [];
  silent = false;
  destroyed = false;
  readonly connection = { stream: { destroy: () => { this.destroyed = true; } } };
  connect: () => Promise<void> = async () => {};
  async query(text: string): Promise<void> {
    this.listened.push(text);
  }
  end(): Promise<void> {
    return this.silent ? new Promise(() => {}) : Promise.resolve();
  }
}

let listener: Listener;
let sent: string[];
let feed: PostgresChangeFeed;
let said: string[];
/** Listening connections the feed made. */
let made: number;
/** How the pool answers a heartbeat it was given: at once, with the tables' schema, unless a test says otherwise. */
let poolAnswer: () => Promise<string>;

beforeEach(() => {
  mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  listener = new Listener();
  sent = [];
  made = 0;
  poolAnswer = async () => 'site';
  feed = new PostgresChangeFeed({
    listener: () => {
      made++;
      return listener as unknown as pg.Client;
    },
    notifyThroughPool: async (channel, payload) => {
      assert.equal(channel, CHANGES_CHANNEL);
      sent.push(payload);
      return poolAnswer();
    },
  });
  said = [];
  feed.reportTo({ info: (_, message) => said.push(`info: ${message}`), warn: (_, message) => said.push(`warn: ${message}`), error: () => {} });
});

afterEach(async () => {
  await feed.close();
  mock.timers.reset();
});

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
const delivered = (payload: string) => listener.emit('notification', { channel: CHANGES_CHANNEL, payload });
/** Starts the feed and hears its first heartbeat back: its generation then. */
const trustedFeed = async (): Promise<number> => {
  feed.generation();
  await settled();
  delivered(sent[0]!);
  return feed.generation()!;
};

test('nothing is trusted until a heartbeat sent through the pool comes back on the listening connection', async () => {
  assert.equal(feed.generation(), undefined);
  await settled();
  assert.equal(listener.listened[0], `listen ${CHANGES_CHANNEL}`);
  assert.match(listener.listened[1]!, /idle_session_timeout/, 'a role\'s idle timeout does not end it');
  assert.equal(sent.length, 1);
  assert.equal(feed.generation(), undefined, 'sent, not yet heard');
  delivered(sent[0]!);
  assert.equal(typeof feed.generation(), 'number');
});

test('a page is kept at most one heartbeat', async () => {
  const trusted = await trustedFeed();
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(feed.generation(), trusted + 1, 'the next heartbeat moves it');
});

test('a heartbeat not heard back by the next one distrusts everything, and one sent a whole heartbeat before has the connection opened anew', async () => {
  const trusted = await trustedFeed();
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(sent.length, 2);
  assert.equal(typeof feed.generation(), 'number', 'the last one came back in time');
  const deaf = listener;
  listener = new Listener();
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(feed.generation(), undefined, 'the second never came back');
  assert.equal(made, 1, 'it may still be on its way');
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(feed.generation(), undefined);
  mock.timers.tick(1_000);
  await settled();
  assert.equal(listener.listened[0], `listen ${CHANGES_CHANNEL}`, 'listening again on a new connection');
  deaf.emit('notification', { channel: CHANGES_CHANNEL, payload: sent.at(-1) });
  assert.equal(feed.generation(), undefined, 'the dropped connection is heard no more');
  delivered(sent.at(-1)!);
  assert.ok(feed.generation()! > trusted, 'trusted again, and nothing kept from before counts');
  assert.deepEqual(said.map((line) => line.split(':')[0]), ['warn', 'info'], 'the loss said once, and the return');
});

test('closing does not wait for a peer gone silent', async () => {
  feed.generation();
  await settled();
  listener.silent = true;
  const closed = feed.close();
  mock.timers.tick(1_000);
  await closed;
  assert.equal(listener.destroyed, true);
});

test('a change announced for its own schema moves the generation, another schema\'s does not', async () => {
  const trusted = await trustedFeed();
  delivered('another_site');
  assert.equal(feed.generation(), trusted);
  delivered('site');
  assert.equal(feed.generation(), trusted + 1);
  feed.written();
  assert.equal(feed.generation(), trusted + 2, 'and so does a write of this process');
});

test('a lost listening connection distrusts everything at once and listens again', async () => {
  await trustedFeed();
  listener.emit('error', new Error('terminating connection due to administrator command'));
  assert.equal(feed.generation(), undefined);
  const lost = listener;
  listener = new Listener();
  mock.timers.tick(1_000);
  await settled();
  assert.equal(listener.listened[0], `listen ${CHANGES_CHANNEL}`);
  lost.emit('notification', { channel: CHANGES_CHANNEL, payload: sent.at(-1) });
  assert.equal(feed.generation(), undefined, 'the lost connection is heard no more');
  delivered(sent.at(-1)!);
  assert.equal(typeof feed.generation(), 'number');
});

test('a heartbeat waits for the connection to listen: one slower to connect than a heartbeat still comes to be trusted', async () => {
  let connected!: () => void;
  listener.connect = () => new Promise<void>((resolve) => { connected = resolve; });
  feed.generation();
  await settled();
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(sent.length, 0, 'nothing sent before it listens');
  connected();
  await settled();
  assert.equal(sent.length, 1);
  delivered(sent[0]!);
  assert.equal(typeof feed.generation(), 'number');
});

test('connections lost in a row are opened again later each time, and at once again after trust', async () => {
  const lostAndReopenedAfter = async (ms: number) => {
    listener.emit('error', new Error('too many clients'));
    const before = made;
    listener = new Listener();
    mock.timers.tick(ms - 1);
    await settled();
    assert.equal(made, before, `not yet reopened ${ms - 1} ms after`);
    mock.timers.tick(1);
    await settled();
    assert.equal(made, before + 1, `reopened ${ms} ms after`);
  };
  feed.generation();
  await settled();
  await lostAndReopenedAfter(1_000);
  await lostAndReopenedAfter(2_000);
  await lostAndReopenedAfter(4_000);
  delivered(sent.at(-1)!);
  assert.equal(typeof feed.generation(), 'number');
  await lostAndReopenedAfter(1_000);
});

test('a pool too busy to send a heartbeat within one distrusts everything, keeps the listening connection and is not asked again', async () => {
  const trusted = await trustedFeed();
  let send!: () => void;
  poolAnswer = () => new Promise<string>((resolve) => { send = () => resolve('site'); });
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(typeof feed.generation(), 'number', 'a heartbeat on its way is not late before the next');
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(feed.generation(), undefined, 'whether the connection hears is not known');
  assert.equal(sent.length, 2, 'the heartbeat on its way is waited for');
  assert.equal(made, 1, 'the connection is kept');
  delivered(sent.at(-1)!);
  send();
  await settled();
  assert.ok(feed.generation()! > trusted, 'trusted again once it comes back');
});

test('a heartbeat the pool could not send distrusts everything at the next, keeps the listening connection and sends another', async () => {
  await trustedFeed();
  poolAnswer = () => Promise.reject(new Error('timeout exceeded when trying to connect'));
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  assert.equal(feed.generation(), undefined);
  assert.equal(sent.length, 3, 'another is sent');
  assert.equal(made, 1, 'the connection is kept');
  poolAnswer = async () => 'site';
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  delivered(sent.at(-1)!);
  assert.equal(typeof feed.generation(), 'number');
});

test('a heartbeat the pool sent just before a beat and heard just after it keeps the listening connection', async () => {
  await trustedFeed();
  let send!: () => void;
  poolAnswer = () => new Promise<string>((resolve) => { send = () => resolve('site'); });
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  mock.timers.tick(HEARTBEAT_MS - 1);
  send();
  await settled();
  mock.timers.tick(1);
  await settled();
  delivered(sent.at(-1)!);
  assert.equal(typeof feed.generation(), 'number');
  mock.timers.tick(1_000);
  await settled();
  assert.equal(made, 1);
});

test('a heartbeat the pool never answers is given up after two beats: another is sent, and trust returns when it is heard', async () => {
  await trustedFeed();
  poolAnswer = () => new Promise<string>(() => {});
  mock.timers.tick(HEARTBEAT_MS);
  await settled();
  poolAnswer = async () => 'site';
  mock.timers.tick(HEARTBEAT_MS * 2);
  await settled();
  assert.equal(sent.length, 3, 'another is sent');
  delivered(sent.at(-1)!);
  assert.equal(typeof feed.generation(), 'number');
  assert.equal(made, 1);
});
