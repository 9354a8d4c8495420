// Summarizes an allocation profile of our server (from BENCH_ALLOC_PROF): the bytes allocated by
// each function (self) and under each (inclusive, once per call stack), as shares of all sampled
// and, given the requests the server answered, as bytes a request; with OUT.json, the same rows as JSON there.
//   node bench/allocation-summary.mjs FILE.heapprofile [requests] [top] [OUT.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { frameLabel, ranked } from './profile-frames.mjs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const requests = Number(process.argv[3] ?? 0);
const top = Number(process.argv[4] ?? 30);
const out = process.argv[5];
const self = new Map();
const inclusive = new Map();
let total = 0;
// Iterative, as a deep stack of a long run could be deeper than the call stack allows.
const pending = [{ node: profile.head, above: new Set() }];
while (pending.length > 0) {
  const { node, above } = pending.pop();
  const key = frameLabel(node.callFrame);
  total += node.selfSize;
  self.set(key, (self.get(key) ?? 0) + node.selfSize);
  const stack = new Set(above).add(key);
  for (const frame of stack) inclusive.set(frame, (inclusive.get(frame) ?? 0) + node.selfSize);
  for (const child of node.children) pending.push({ node: child, above: stack });
}
const perRequest = (bytes) => (requests > 0 ? `${Math.round(bytes / requests).toLocaleString('en-US').padStart(8)} B/req  ` : '');
const rows = (map) => ranked(map, top).map(([key, bytes]) => `${(100 * bytes / total).toFixed(1).padStart(5)} %  ${perRequest(bytes)}${key}`).join('\n');
console.log(`allocated: ${(total / 1e6).toFixed(1)} MB sampled${requests > 0 ? `, ${(total / requests / 1024).toFixed(1)} KiB a request over ${requests.toLocaleString('en-US')} requests` : ''}`);
console.log(`\nself\n${rows(self)}`);
console.log(`\ninclusive\n${rows(inclusive)}`);
if (out) {
  const entries = (map) => ranked(map, top).map(([where, bytes]) => ({
    where, share: Math.round(1000 * bytes / total) / 1000, ...(requests > 0 && { bytesPerRequest: Math.round(bytes / requests) }),
  }));
  writeFileSync(out, `${JSON.stringify({ profile: process.argv[2], sampledBytes: total, requests, self: entries(self), inclusive: entries(inclusive) }, null, 2)}\n`);
}
