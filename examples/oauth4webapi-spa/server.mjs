/**
 * Serves the oauth4webapi example: a single-page app with no server side, from its own origin.
 * No bundler: oauth4webapi is one ES module without dependencies, served from node_modules as it is.
 *
 *   ISSUER=http://localhost:3000 CLIENT_ID=… node examples/oauth4webapi-spa/server.mjs
 *
 * Register a public app with redirect URI {APP_URL}/callback and post-logout redirect URI
 * {APP_URL}/signed-out (examples/README.md). APP_URL defaults to http://localhost:PORT (PORT 4003).
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const CLIENT_ID = process.env.CLIENT_ID;
const PORT = Number(process.env.PORT ?? 4003);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
if (!CLIENT_ID) {
  console.error('Set CLIENT_ID (examples/README.md says how to register the app).');
  process.exit(2);
}

const here = new URL('./', import.meta.url);
const library = import.meta.resolve('oauth4webapi');
const JS = 'text/javascript; charset=utf-8';
const files = {
  '/': [new URL('index.html', here), 'text/html; charset=utf-8'],
  '/app.js': [new URL('app.js', here), JS],
  '/vendor/oauth4webapi.js': [new URL(library), JS],
};
// The app's routes are all the same page; its script looks at the path.
files['/callback'] = files['/signed-out'] = files['/'];

createServer(async (request, response) => {
  const path = new URL(request.url, APP_URL).pathname;
  if (path === '/config.js') {
    response.writeHead(200, { 'content-type': JS, 'cache-control': 'no-store' });
    return response.end(`export default ${JSON.stringify({ issuer: ISSUER, clientId: CLIENT_ID })};\n`);
  }
  const file = request.method === 'GET' ? files[path] : undefined;
  if (!file) return response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
  response.writeHead(200, { 'content-type': file[1], 'cache-control': 'no-cache' });
  response.end(await readFile(file[0]));
}).listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`oauth4webapi example listening on ${APP_URL}`));
