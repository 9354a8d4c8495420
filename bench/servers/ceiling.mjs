// The ceiling (issue 8 f): a bare Fastify server answering the same profile JSON from memory at
// GET /api/open/v1/me, with nothing else — no hooks, no logger, no lookup. PORT and PROFILE_FILE.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const profile = JSON.parse(readFileSync(process.env.PROFILE_FILE, 'utf8'));
const app = Fastify({ logger: false });
app.get('/api/open/v1/me', async () => profile);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
