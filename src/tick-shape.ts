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
import { createHook } from 'node:async_hooks';

let heldTick: object | undefined;

/**
 * Holds the tick object of one `process.nextTick`, handed to an init hook that is there for that
 * call only. Not `executionAsyncResource()` in the tick's callback: that call tells Node to pass
 * the current resource into every callback from native code for good, a cost on each socket
 * event. And the hook is not disabled from inside its own callback: Node 20 then leaves its
 * count of hooks at one, and every native callback goes through its hooks' trampoline.
 */
export function holdTickObjectShape(): void {
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') heldTick = resource;
    },
  }).enable();
  process.nextTick(() => {});
  hook.disable();
}
