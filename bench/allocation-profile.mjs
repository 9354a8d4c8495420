// Loaded into our server by `BENCH_ALLOC_PROF=DIR` (bench/run.ts, `--import`): V8's sampling heap
// profiler, told to keep the samples of objects the collector has freed, so the profile says what
// is allocated, garbage included (what makes the collector run), not only what is still live, as
// Node's own --heap-prof does. Written to DIR when the server exits; read it with
// bench/allocation-summary.mjs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_ALLOC_PROF;
if (dir) {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  // A session of the main thread answers at once, so the profile is written before the process ends.
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
