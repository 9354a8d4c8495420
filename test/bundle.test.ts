/**
 * The server `npm start` runs is one bundle of the compiled modules (scripts/bundle-service.mjs,
 * docs/performance.md decision 45). Each module in it still finds the files that lie beside it
 * in the repository, as it did before bundling: the locale catalogs, public/, the docs' example
 * apps, the common-password list, swagger-ui-dist's files and the image child's own file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { escapeHtml } from '../src/http/views/html.js';
import { temporarySqlitePath } from './support/databases.js';
import { PLAIN_PNG } from './support/images.js';
import { freePort } from './support/instances.js';
import { compiled, run, SERVICE_ENTRY } from './support/processes.js';
import { Visitor } from './site/visitor.js';

test('each module of the bundled server finds the files beside it as it did unbundled', { timeout: 120_000 }, async () => {
  compiled();
  assert.match(SERVICE_ENTRY, /^dist\/bundle\//, 'npm start runs the bundle');
  const port = await freePort();
  const server = run(process.execPath, [SERVICE_ENTRY], { DATABASE_URL: `sqlite:${temporarySqlitePath()}`, PORT: String(port), DEMO: '1', LOG_LEVEL: 'warn' });
  try {
    const banner = await server.waitFor(/Demo sign-in: +demo \/ \S+/);
    const password = /Demo sign-in: +demo \/ (\S+)/.exec(banner)![1]!;
    const base = `http://127.0.0.1:${port}`;
    const visitor = new Visitor(base);

    const chinese = await visitor.request('/signup', { headers: { 'accept-language': 'zh-CN' } });
    assert.match(chinese.text, /<html lang="zh-CN"/, 'the catalogs under resources/locales/');
    const common = await visitor.post('/signup', { username: 'bundled', nickname: '', password: 'password123', return_to: '/' });
    assert.match(common.text, /one of the most common passwords/, 'resources/common-passwords.txt');

    assert.equal((await fetch(`${base}/static/style.css`)).status, 200, 'public/');
    assert.equal((await fetch(`${base}/static/swagger-ui/swagger-ui.css`)).status, 200, 'swagger-ui-dist, resolved from the module');
    const docs = await (await fetch(`${base}/docs`)).text();
    const example = readFileSync('examples/arctic/server.mjs', 'utf8').split('\n').find((line) => line.includes('arctic'))!;
    assert.ok(docs.includes(escapeHtml(example.trim())), 'examples/, shown on the docs page');

    await visitor.signIn('demo', password);
    const form = new FormData();
    form.append('_csrf', await visitor.csrf());
    form.append('avatar', new Blob([Buffer.from(PLAIN_PNG)], { type: 'image/png' }), 'me.png');
    const upload = await visitor.request('/settings/profile/avatar', { method: 'POST', body: form });
    assert.equal(upload.status, 303, 'the image child (dist/images/sharp-child.js) re-encoded the upload');
    assert.match((await visitor.get(upload.location!)).text, /Your avatar was updated/);
  } finally {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
  }
});

test('every chunk of the bundle loads, the ones loaded at first use included (the MCP SDK, nodemailer, passkeys, QR codes)', () => {
  compiled();
  // The files the last build wrote (the previous build's are kept for servers still running
  // from it); main.js would start a server, every other file is a chunk some import loads.
  const chunks = readFileSync('dist/bundle/.written', 'utf8').split('\n').filter((file) => file.endsWith('.js') && file !== 'main.js');
  assert.ok(chunks.length > 5, chunks.join(' '));
  const loader = `for (const chunk of ${JSON.stringify(chunks)}) await import('./dist/bundle/' + chunk);`;
  const loaded = spawnSync(process.execPath, ['--input-type=module', '--eval', loader], { encoding: 'utf8' });
  assert.equal(loaded.status, 0, loaded.stderr);
});

test('no file of the bundle holds a character above U+00FF, so V8 keeps the text of each one byte a character', () => {
  compiled();
  // The last build's files (the previous build's, kept beside them, may be of older code).
  const files = readFileSync('dist/bundle/.written', 'utf8').split('\n').filter(Boolean);
  assert.ok(files.includes('main.js'), files.join(' '));
  for (const file of files) assert.doesNotMatch(readFileSync(join('dist/bundle', file), 'utf8'), /[^\0-\xff]/, file);
});

test('a build keeps the chunks of the build before it, which a server still running from it loads at their first use, and removes older ones', { timeout: 120_000 }, async () => {
  compiled();
  const out = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
  try {
    writeFileSync(join(out, 'chunk-PREVIOUS.js'), '');
    writeFileSync(join(out, 'chunk-OLDER.js'), '');
    writeFileSync(join(out, '.written'), 'main.js\nchunk-PREVIOUS.js\n');
    const bundled = spawnSync(process.execPath, ['scripts/bundle-service.mjs', out], { encoding: 'utf8' });
    assert.equal(bundled.status, 0, bundled.stderr);
    assert.equal(existsSync(join(out, 'chunk-PREVIOUS.js')), true, 'the previous build\'s chunk is kept');
    assert.equal(existsSync(join(out, 'chunk-OLDER.js')), false, 'a chunk of an older build is removed');
    const written = readFileSync(join(out, '.written'), 'utf8').split('\n').filter(Boolean);
    assert.ok(written.includes('main.js') && !written.includes('chunk-PREVIOUS.js'), written.join(' '));
    assert.ok(written.every((file) => existsSync(join(out, file))), 'every file the build wrote is there');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
