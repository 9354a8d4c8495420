/**
 * Keeps one of Node's tick objects alive for the life of the process, so that V8 keeps the
 * hidden classes (maps) every `process.nextTick` builds its tick object through
 * (docs/performance.md, decision 50).
 *
 * The tick object is a literal with computed keys (`{ [async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, callback, args }`), and V8 11 records which map each of those
 * keys was defined on in a feedback slot that knows two states only: one map, or any. The maps
 * after the first key are held by nothing but the objects that have them, so a full collection
 * while no tick is pending (a server idle after its start) clears them; the next tick makes new
 * maps, the slots see a map that is not their (cleared) one, and they go to "any" for good:
 * from then on every tick leaves optimized code for V8's runtime, 2.5-2.9 µs of CPU a request
 * measured under load. A tick object that lives holds its map and, through its back pointers,
 * every map before it.
 */
import { executionAsyncResource } from 'node:async_hooks';

let heldTick: object | undefined;

/** Holds the tick object of one `process.nextTick`: inside its callback, it is the resource being executed. */
export function holdTickObjectShape(): void {
  process.nextTick(() => { heldTick = executionAsyncResource(); });
}
