// The matched ceiling (issue 35 item 2): bare Fastify on the same Node flags as ours, answering
// GET /api/open/v1/me with our /me's very bytes and every header ours sends (security, CORS,
// Cache-Control, Vary, the rate-limit fields), from memory: no hook, no logger, no lookup, no
// limit. What any Fastify server must spend to send our answer. PORT, PROFILE_FILE, HEADERS_FILE;
// STATUS (default 200): with 401 and our refusal's body and headers, the matched ceiling of the
// garbage 401 (scenario c2).
//
// BUSY_US (default 0): CPU work added to each answer, about that many µs, to slow the server to
// another's rate: what sending the answer costs depends on the rate it is sent at (the rate curve,
// docs/performance.md, "The rate effect"). The work is a loop that allocates nothing (so it adds no
// garbage), sized at start; GET /busy answers what one answer's work measured there, in µs.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.env.PROFILE_FILE, 'utf8');
const headers = JSON.parse(readFileSync(process.env.HEADERS_FILE, 'utf8'));
const status = Number(process.env.STATUS ?? 200);
const busyUs = Number(process.env.BUSY_US ?? 0);

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
work(1e7);
const iterationsPerUs = 1e7 / cpuUsOf(1e7, 5);
const iterations = Math.round(busyUs * iterationsPerUs);
// The median of three measurements of the work as sized, in µs.
const busyMeasuredUs = busyUs === 0 ? 0 : [0, 1, 2].map(() => cpuUsOf(iterations, 5_000)).sort((a, b) => a - b)[1];

const app = Fastify({ logger: false });
app.get('/api/open/v1/me', (_request, reply) => {
  if (iterations > 0) work(iterations);
  reply.code(status).headers(headers);
  return reply.send(body);
});
app.get('/busy', async () => ({ busyUs: busyMeasuredUs }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
