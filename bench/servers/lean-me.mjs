// The lean resource route (issue 35 item 2): what an app developer would write over the peer to
// serve a profile: raw node:http, the bearer token looked up in the peer's own durable store (its
// SQLite file, as peer-sqlite-adapter.mjs writes it: one row per token, the payload as JSON), an
// expiry check, and the profile JSON. No framework, no limits, no security headers, no metrics.
// PORT, PEER_SQLITE (the peer's file), PROFILE_FILE; BUSY_US (default 0) as the matched ceiling's,
// for the lean route's own rate curve: GET /busy answers what one answer's work measured.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { busyWork } from './busy-work.mjs';

const profile = JSON.parse(readFileSync(process.env.PROFILE_FILE, 'utf8'));
const db = new Database(process.env.PEER_SQLITE, { readonly: true, fileMustExist: true });
const find = db.prepare("select payload, expires_at from oidc where model = 'AccessToken' and id = ?");
const busy = busyWork(Number(process.env.BUSY_US ?? 0));

const server = createServer((req, res) => {
  if (req.url === '/busy') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ busyUs: busy.measuredUs }));
    return;
  }
  busy.run();
  const token = req.method === 'GET' && req.url === '/api/open/v1/me' && /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const row = token ? find.get(token) : undefined;
  if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) {
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    return;
  }
  const { accountId } = JSON.parse(row.payload);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ ...profile, sub: accountId }));
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
