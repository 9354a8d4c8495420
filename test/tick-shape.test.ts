// Decision 50 (docs/performance.md): an object shaped as a tick object, held, keeps
// `process.nextTick`'s feedback for its literal monomorphic across full collections made while
// no tick is pending.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

/** Runs `script` as an ES module in a child Node with `flags`; returns what it printed. */
function runChild(flags: string[], script: string): string {
  // Printed into a file: V8's print into a pipe, under the test runner, came out cut short in
  // some runs.
  const dir = mkdtempSync(join(tmpdir(), 'tick-shape-'));
  try {
    const out = openSync(join(dir, 'out'), 'w');
    const child = spawnSync(process.execPath, ['--import', 'tsx', ...flags, '--input-type=module', '-e', script], {
      encoding: 'utf8', stdio: ['ignore', out, 'pipe'],
    });
    closeSync(out);
    assert.equal(child.status, 0, child.stderr);
    return readFileSync(join(dir, 'out'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs ticks, two full collections with none pending, ticks again, and returns the states of
 * the feedback slots that define the tick literal's keys (`%DebugPrint` of `process.nextTick`).
 */
function tickLiteralSlotStates(holdTheShape: boolean): string[] {
  const script = `
    ${holdTheShape ? "(await import('./src/tick-shape.ts')).holdTickObjectShape();" : ''}
    // 2,000 ticks: after 20,000 V8 had optimized nextTick before the collections, and its slots
    // then stayed as they were whatever was held, so the test would show nothing.
    const ticks = () => { for (let i = 0; i < 2000; i++) process.nextTick(() => {}); };
    const later = () => new Promise((resolve) => setTimeout(resolve, 10));
    await later(); ticks(); await later();
    gc(); gc();
    ticks(); await later();
    %DebugPrint(process.nextTick);
  `;
  const printed = runChild(['--allow-natives-syntax', '--expose-gc'], script);
  return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
}

test('without a held tick object, a full collection while no tick is pending sends the tick literal megamorphic (what decision 50 works around; if this fails, Node no longer needs it)', () => {
  assert.ok(tickLiteralSlotStates(false).includes('MEGAMORPHIC'));
});

test('with a tick object held, the tick literal stays monomorphic across full collections', () => {
  const states = tickLiteralSlotStates(true);
  assert.equal(states.length, 4);
  assert.deepEqual(new Set(states), new Set(['MONOMORPHIC']));
});

/**
 * What a process's async hooks and V8's protectors look like after `holdTickObjectShape()` (or
 * nothing, without `hold`) and a turn of the event loop: Node's counts of hooks, its hook check
 * and its resource flag, and the protectors V8 reports invalidated.
 */
function asyncMachineryAfter(hold: boolean): { fields: number[]; invalidated: string[] } {
  const printed = runChild(['--expose-internals', '--no-warnings', '--trace-protector-invalidation'], `
    import { createRequire } from 'node:module';
    const { internalBinding } = createRequire(import.meta.url)('internal/test/binding');
    const { async_hook_fields: fields, constants } = internalBinding('async_wrap');
    ${hold ? "(await import('./src/tick-shape.ts')).holdTickObjectShape();" : ''}
    await new Promise((resolve) => setTimeout(resolve, 10));
    const state = [constants.kTotals, constants.kCheck, constants.kUsesExecutionAsyncResource].map((field) => fields[field]);
    process.stdout.write(JSON.stringify(state) + '\\n');
  `);
  // V8 prints through C's buffered stdout, so its lines may come after the state's line.
  const lines = printed.trim().split('\n');
  return {
    fields: JSON.parse(lines.find((line) => line.startsWith('['))!) as number[],
    invalidated: lines.filter((line) => line.startsWith('Invalidating protector')).sort(),
  };
}

// tsx's loader invalidates V8's ArrayBufferDetaching protector when it loads a file, in either
// child or neither, as its timing falls (a plain child run through tsx printed it 30 times of 30,
// without tsx never): that one is left out. Every other protector is compared.
const byTsx = (line: string) => line.endsWith(' ArrayBufferDetaching');

test('holding the tick shape leaves Node\'s async hooks and V8\'s protectors as they were (no hook, no resource passed into native callbacks, promises still inlined)', () => {
  const [held, plain] = [asyncMachineryAfter(true), asyncMachineryAfter(false)];
  assert.deepEqual(held.fields, plain.fields);
  assert.deepEqual(held.invalidated.filter((line) => !byTsx(line)), plain.invalidated.filter((line) => !byTsx(line)));
});
