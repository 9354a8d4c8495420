// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF): self time per function and per package.
//   node bench/profile-summary.mjs FILE.cpuprofile [top]
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 30);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (deltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const functions = new Map();
const packages = new Map();
for (const [id, time] of self) {
  const { callFrame: f } = byId.get(id);
  const where = f.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, 'node_modules/').replace(/.*\/dist\//, 'dist/');
  const key = `${f.functionName || '(anonymous)'}  ${where}:${f.lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + time);
  const pkg = where.startsWith('node_modules/') ? where.split('/').slice(0, where.split('/')[1].startsWith('@') ? 3 : 2).join('/')
    : where.startsWith('dist/') ? where.split('/').slice(0, 3).join('/') : where === '' ? `(${f.functionName})` : 'node:internal';
  packages.set(pkg, (packages.get(pkg) ?? 0) + time);
}
const show = (title, map, n) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${((v / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
};
show('self time by package', packages, 20);
show('self time by function', functions, top);
