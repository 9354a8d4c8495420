// The matched ceiling (issue 35 item 2): bare Fastify on the same Node flags as ours, answering
// GET /api/open/v1/me with our /me's very bytes and every header ours sends (security, CORS,
// Cache-Control, Vary, the rate-limit fields), from memory: no hook, no logger, no lookup, no
// limit. What any Fastify server must spend to send our answer. PORT, PROFILE_FILE, HEADERS_FILE;
// STATUS (default 200): with 401 and our refusal's body and headers, the matched ceiling of the
// garbage 401 (scenario c2).
//
// BUSY_US (default 0): CPU work added to each answer, about that many µs, to slow the server to
// another's rate (busy-work.mjs); GET /busy answers what one answer's work measured there, in µs.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { busyWork } from './busy-work.mjs';

const body = readFileSync(process.env.PROFILE_FILE, 'utf8');
const headers = JSON.parse(readFileSync(process.env.HEADERS_FILE, 'utf8'));
const status = Number(process.env.STATUS ?? 200);

const busy = busyWork(Number(process.env.BUSY_US ?? 0));

const app = Fastify({ logger: false });
app.get('/api/open/v1/me', (_request, reply) => {
  busy.run();
  reply.code(status).headers(headers);
  return reply.send(body);
});
app.get('/busy', async () => ({ busyUs: busy.measuredUs }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
