/**
 * Keeps an object shaped as Node's tick objects alive for the life of the process, so that V8
 * keeps the hidden classes (maps) every `process.nextTick` builds its tick object through
 * (docs/performance.md, decision 50).
 *
 * The tick object is a literal with computed keys (`{ [async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, callback, args }`), and V8 11 records which map each of those
 * keys was defined on in a feedback slot that knows two states only: one map, or any. The slot
 * holds its map weakly, as do the transitions to the maps after the first key, so a full
 * collection while no tick is pending (a server idle after its start) can clear them; the next
 * tick makes new maps, the slots see a map that is not their (cleared) one, and they go to "any"
 * for good: from then on every tick calls into V8's runtime for each of those keys, 2.5-2.9 µs
 * of CPU a request measured under load. An object built by a literal of the same keys, in the
 * same order and with values of the same kinds, goes through the same maps, and while it lives
 * it holds them.
 *
 * Node's two symbols are read from an `AsyncResource`, which has them as its own properties.
 * Not from a tick itself: taking one needs an async init hook, whose promise hooks invalidate
 * V8's PromiseHook protector for good (TurboFan then stops inlining promises and awaits), or
 * `executionAsyncResource()`, which makes Node pass the current resource into every callback
 * from native code for good.
 */
import { AsyncResource } from 'node:async_hooks';

/** Held, never read: its life is the point. */
let heldTickShape: object | undefined;

export function holdTickObjectShape(): void {
  const resource = new AsyncResource('TickObjectShape');
  const symbols = Object.getOwnPropertySymbols(resource);
  const asyncIdSymbol = symbols.find((symbol) => symbol.description === 'async_id_symbol');
  const triggerAsyncIdSymbol = symbols.find((symbol) => symbol.description === 'trigger_async_id_symbol');
  // A Node whose resources lack them builds its ticks otherwise: nothing to hold (the test of
  // decision 50 then says so).
  if (asyncIdSymbol === undefined || triggerAsyncIdSymbol === undefined) return;
  const callback = () => {};
  const args = undefined;
  // The ids as Node's are: numbers read from a Float64Array, so heap numbers (V8's Double fields).
  const ids = new Float64Array([resource.asyncId(), resource.triggerAsyncId()]);
  heldTickShape = { [asyncIdSymbol]: ids[0], [triggerAsyncIdSymbol]: ids[1], callback, args };
}
