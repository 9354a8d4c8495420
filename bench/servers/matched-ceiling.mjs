// The matched ceiling (issue 35 item 2): bare Fastify on the same Node flags as ours, answering
// GET /api/open/v1/me with our /me's very bytes and every header ours sends (security, CORS,
// Cache-Control, Vary, the rate-limit fields), from memory: no hook, no logger, no lookup, no
// limit. What any Fastify server must spend to send our answer. PORT, PROFILE_FILE, HEADERS_FILE.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.env.PROFILE_FILE, 'utf8');
const headers = JSON.parse(readFileSync(process.env.HEADERS_FILE, 'utf8'));
const app = Fastify({ logger: false });
app.get('/api/open/v1/me', (_request, reply) => {
  reply.headers(headers);
  return reply.send(body);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
