// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF): self time per package and per function, and
// the inclusive time of our own functions (dist/), as shares of the busy time: the idle samples
// (the server waiting between scenarios, while the peer is prepared) are left out.
//   node bench/profile-summary.mjs FILE.cpuprofile [top]
import { readFileSync } from 'node:fs';
import { frameLabel, ranked, scriptOf } from './profile-frames.mjs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 30);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (deltas[i] ?? 0));
}
const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';
const total = [...self].filter(([id]) => !isIdle(id)).reduce((a, [, t]) => a + t, 0);
const functions = new Map();
const packages = new Map();
for (const [id, time] of self) {
  if (isIdle(id)) continue;
  const { callFrame: f } = byId.get(id);
  const at = scriptOf(f);
  functions.set(frameLabel(f), (functions.get(frameLabel(f)) ?? 0) + time);
  const pkg = at.startsWith('node_modules/') ? at.split('/').slice(0, at.split('/')[1].startsWith('@') ? 3 : 2).join('/')
    : at.startsWith('dist/') ? at.split('/').slice(0, 3).join('/') : at === '' ? `(${f.functionName})` : 'node:internal';
  packages.set(pkg, (packages.get(pkg) ?? 0) + time);
}
// Inclusive time: a node's own time and its descendants'; a function counted once per call stack.
const inclusive = new Map();
const walk = (id, onStack) => {
  const node = byId.get(id);
  const key = frameLabel(node.callFrame);
  let sum = self.get(id) ?? 0;
  const nested = new Set(onStack).add(key);
  for (const child of node.children ?? []) sum += walk(child, nested);
  if (scriptOf(node.callFrame).startsWith('dist/') && !onStack.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
  return sum;
};
walk(profile.nodes[0].id, new Set());
const show = (title, map, n) => {
  console.log(`\n${title}`);
  for (const [k, v] of ranked(map, n)) console.log(`${((v / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(`busy: ${(total / 1e6).toFixed(2)} s of CPU samples (idle left out)`);
show('self time by package', packages, 20);
show('self time by function', functions, top);
show('inclusive time of our functions (dist/)', inclusive, top);
