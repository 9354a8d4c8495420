/**
 * Work counted, not timed: V8's precise block coverage counts every execution of every block of
 * JavaScript (each turn of each loop, each call) in our code and its dependencies. The count does
 * not depend on the machine or its load, so a test that compares the work of a short input and a
 * long one cannot flake (test/core/pathological-bodies.test.ts says more).
 */
import { Session } from 'node:inspector';

const inspector = new Session();

/** An inspector command; on the thread's own session the answer comes before `post` returns. */
function command<T>(method: string, params?: object): T {
  let answer: { error: Error | null; result?: T } | undefined;
  inspector.post(method, params ?? {}, (error, result) => { answer = { error, result: result as T }; });
  if (answer === undefined) throw new Error(`${method} did not answer at once`);
  if (answer.error) throw answer.error;
  return answer.result!;
}

interface Coverage {
  result: Array<{ url: string; functions: Array<{ ranges: Array<{ count: number }> }> }>;
}

/** Starts counting (a test file's `before`). */
export function startCountingWork(): void {
  inspector.connect();
  command('Profiler.enable');
  command('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
}

/** Stops counting (a test file's `after`). */
export function stopCountingWork(): void {
  command('Profiler.stopPreciseCoverage');
  inspector.disconnect();
}

/** Blocks of JavaScript executed by `work`: every script but Node's own (the inspector's plumbing). */
export function blocksExecuted(work: () => void): number {
  command('Profiler.takePreciseCoverage'); // sets every count back to 0
  work();
  const { result } = command<Coverage>('Profiler.takePreciseCoverage');
  let blocks = 0;
  for (const script of result) {
    if (script.url === '' || script.url.startsWith('node:')) continue;
    for (const fn of script.functions) for (const range of fn.ranges) blocks += range.count;
  }
  return blocks;
}
