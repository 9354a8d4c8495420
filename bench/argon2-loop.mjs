// What argon2id costs in memory and time in process, N verifications CONC at a time, with the
// service's parameters (docs/performance.md, decision 39): the peak's rise over the process at
// rest (`VmHWM`, and `RssAnon` sampled every 5 ms), what is left half a second after, and the
// wall and CPU time per verification. One JSON line on standard output. `M` (KiB) and `T` weigh
// other parameters than the service's (OWASP's equal-defence alternatives, decision 66).
//   CONC=1 N=400 node --max-semi-space-size=8 --heap-growing-percent=20 bench/argon2-loop.mjs
//   CONC=1 N=400 M=19456 T=2 node … bench/argon2-loop.mjs
import { readFileSync } from 'node:fs';
import { hash, verify } from '@node-rs/argon2';

const PARAMETERS = { algorithm: 2, memoryCost: Number(process.env.M ?? 12_288), timeCost: Number(process.env.T ?? 3), parallelism: 1 };
const conc = Number(process.env.CONC ?? 2);
const total = Number(process.env.N ?? 60);
const mb = (kb) => Math.round(kb / 102.4) / 10;

function status() {
  const text = readFileSync('/proc/self/status', 'utf8');
  const field = (name) => mb(Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)[1]));
  return { hwm: field('VmHWM'), rss: field('VmRSS'), anon: field('RssAnon') };
}

const stored = await hash('a password', PARAMETERS);
await new Promise((resolve) => setTimeout(resolve, 300));
const rest = status();
let highestAnon = rest.anon;
const sampler = setInterval(() => { highestAnon = Math.max(highestAnon, status().anon); }, 5);
let started = 0;
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
async function worker() {
  while (started < total) {
    started += 1;
    await verify(stored, `guess ${started}`);
  }
}
await Promise.all(Array.from({ length: conc }, worker));
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
const end = status();
await new Promise((resolve) => setTimeout(resolve, 500));
const later = status();
console.log(JSON.stringify({
  memoryCostKiB: PARAMETERS.memoryCost, timeCost: PARAMETERS.timeCost, atOnce: conc, verifications: total, mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
  restRssMb: rest.rss, peakRiseMb: Math.round((end.hwm - rest.rss) * 10) / 10, anonRiseMb: Math.round((highestAnon - rest.anon) * 10) / 10,
  anonLeftAfter500msMb: Math.round((later.anon - rest.anon) * 10) / 10,
  wallMsPerVerification: Math.round((wallMs / total) * 10) / 10, cpuMsPerVerification: Math.round(((cpu.user + cpu.system) / 1000 / total) * 10) / 10,
}));
