// Where a refresh's time goes, from a V8 .cpuprofile of our server under scenario d or d2
// (BENCH_CPU_PROF): each busy sample goes to the first piece below that a frame of its stack names
// (so a statement run by the commit is the commit's, not Kysely's), and start-up (module loading)
// is left out with the idle samples. A stack starts where an await resumed, not at the request. Shares are of the
// sampled time, which also counts a system call waiting (the profiler samples the stack, not the CPU).
//   node bench/refresh-pieces.mjs FILE.cpuprofile [CPU µs per refresh]
import { readFileSync } from 'node:fs';

const PIECES = [
  ['start-up (left out)', (f) => f.url.startsWith('node:internal/modules') || f.functionName === 'compileSourceTextModule'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['sending the answer (writev)', (f) => f.functionName === 'writev'],
  ['the id_token: claims and RS256 signature', (f) => f.functionName === 'issueIdToken' || f.url.includes('node_modules/jose/')],
  ['the commit (WAL write)', (f) => f.functionName === 'commitTransaction'],
  ['BEGIN and the connection turn', (f) => f.functionName === 'beginTransaction' || f.functionName === 'provideConnection'],
  ['the token lookup: consuming write with grant and user', (f) => ['consumeRefresh', 'consumeWithGrant', 'findGrantWithUser'].includes(f.functionName)],
  ['the new pair and the successor (statements)', (f) => f.functionName === 'insertPair'],
  ['the grant\'s last use', (f) => f.functionName === 'touch' && f.url.includes('/grants')],
  ['new token strings and hashes', (f) => f.functionName === 'generateToken' || f.functionName === 'hashSecret'],
  ['the replay window\'s seal', (f) => f.functionName === 'sealReplay'],
  ['the audit line (pino, write)', (f) => f.functionName === 'record' && f.url.endsWith('observability/audit.js')],
  ['figure counting', (f) => f.functionName === 'record' && f.url.endsWith('staff/figures.js')],
  ['metrics', (f) => f.url.includes('prom-client') || f.functionName === 'observeHttp'],
  ['client authentication', (f) => ['authenticateClient', 'clientCredentials', 'resolveClient'].includes(f.functionName)],
  ['endpoint limits', (f) => f.functionName === 'authenticating' && f.url.includes('endpoint-limits')],
  ['the transaction\'s machinery (Kysely, mutex)', (f) => f.url.includes('kysely') || f.url.endsWith('dist/storage/database.js')],
  // These three by the running function alone: every request's stack passes through all of them.
  ['the grant and the route\'s own work', (f, leaf) => leaf && /dist\/(core|http|storage)\//.test(f.url)],
  ['Fastify', (f, leaf) => leaf && /node_modules\/(fastify|find-my-way|avvio|@fastify|fast-json-stringify)/.test(f.url)],
  ['Node\'s HTTP server', (f, leaf) => leaf && /^node:(_http|net|stream|events|internal\/(streams|http|stream_base|process\/task_queues))/.test(f.url)],
];

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const cpuUs = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const time = new Map();
for (let i = 0; i < profile.samples.length; i++) time.set(profile.samples[i], (time.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const pieces = new Map();
const rest = new Map();
for (const [id, t] of time) {
  if (byId.get(id).callFrame.functionName === '(idle)') continue;
  const stack = [];
  for (let at = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at).callFrame);
  const found = PIECES.find(([, matches]) => stack.some((f, i) => matches(f, i === 0)));
  const piece = found ? found[0] : `the rest`;
  if (process.env.PIECE && piece === process.env.PIECE) rest.set(stack[0].functionName + ' ' + stack[0].url, (rest.get(stack[0].functionName + ' ' + stack[0].url) ?? 0) + t);
  pieces.set(piece, (pieces.get(piece) ?? 0) + t);
}
pieces.delete('start-up (left out)');
const busy = [...pieces.values()].reduce((a, b) => a + b, 0);
console.log(`busy: ${(busy / 1e6).toFixed(2)} s sampled, start-up and idle left out`);
// PIECE="the rest" (or a piece's name): what that piece's samples were running, for a closer look.
for (const [where, t] of [...rest].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.error(`  ${((t / busy) * 100).toFixed(1)} % ${where}`);
for (const [piece, t] of [...pieces].sort((a, b) => b[1] - a[1])) {
  const share = t / busy;
  console.log(`| ${piece} | ${(share * 100).toFixed(1)} % |${cpuUs === undefined ? '' : ` ${(share * cpuUs).toFixed(0)} |`}`);
}
