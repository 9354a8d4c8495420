// Work added to each answer of a reference server, about `busyUs` µs of CPU, to slow it to
// another's rate: what a server spends on each answer depends on the rate it answers at (the rate
// curve, docs/performance.md, "The rate effect"). A loop that allocates nothing (so it adds no
// garbage), sized at start; `measuredUs` is what one answer's work measured there (the median of
// three measurements), which the server answers at GET /busy.
let sink = 0;
function work(iterations) {
  let x = sink;
  for (let i = 0; i < iterations; i++) x = (x * 1103515245 + 12345) | 0;
  sink = x;
}

/** The CPU µs `calls` calls of `work(iterations)` take each. */
function cpuUsOf(iterations, calls) {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) work(iterations);
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / calls;
}

export function busyWork(busyUs) {
  if (busyUs === 0) return { run() {}, measuredUs: 0 };
  work(1e7);
  const iterations = Math.round(busyUs * (1e7 / cpuUsOf(1e7, 5)));
  const measuredUs = [0, 1, 2].map(() => cpuUsOf(iterations, 5_000)).sort((a, b) => a - b)[1];
  return { run: () => work(iterations), measuredUs };
}
