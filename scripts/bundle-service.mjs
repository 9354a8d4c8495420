// Bundles the server tsc compiled (dist/main.js and all it imports, our modules and the
// dependencies written in JavaScript) into dist/bundle/, which `npm start` runs. One bundle
// instead of about a thousand ES modules: V8 keeps the source text of every module it loads, and
// each module has its own records, so the server holds about 7 MB less at its peak
// (docs/performance.md, decision 45). Run by scripts/build.mjs after tsc, under its lock.
//
// What stays outside the bundle, loaded from node_modules as before:
// - native addons (better-sqlite3, @node-rs/argon2, sharp);
// - OpenTelemetry, its hook and @fastify/otel: its instrumentations patch modules as Node loads
//   them, and it is loaded only when traces are exported (src/main.ts);
// - what the code names at run time only (`createRequire(…)('pg')`, ioredis, swagger-ui-dist's
//   files), which a bundler cannot see.
// Dynamic imports stay lazy: each becomes a chunk of its own, loaded at its first use (decision 29).
// Each file has its characters above U+00FF escaped before it is written
// (scripts/one-byte-source.mjs), so that V8 holds its text one byte a character (decision 61).
import { build } from 'esbuild';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oneByteSource } from './one-byte-source.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** dist/bundle/, or the folder named as the one argument (the tests bundle into a folder of their own). */
const OUT = process.argv[2] ?? join(ROOT, 'dist', 'bundle');
const IMPORT_META_URL = /\bimport\.meta\.url\b/g;
/** The files the last build wrote, one name a line. */
const WRITTEN = join(OUT, '.written');

/**
 * Gives each bundled module its own `import.meta.url`, the URL of the file it was bundled from,
 * so that what it finds beside itself (the locale catalogs, public/, the image child's file) and
 * what it resolves from there (`createRequire(import.meta.url)`) are found as they were.
 */
const ownModuleUrls = {
  name: 'own-module-urls',
  setup(bundle) {
    bundle.onLoad({ filter: /\.(?:js|mjs|cjs)$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const fromBundle = relative(OUT, path).split(sep).join('/');
      return { contents: source.replace(IMPORT_META_URL, `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'js' };
    });
  },
};

// A server still running from the previous build loads its lazy chunks (nodemailer, the MCP
// SDK…) from here at their first use, by names that change with their content: the previous
// build's files are kept, older ones removed.
const previous = new Set((await readFile(WRITTEN, 'utf8').catch(() => '')).split('\n').filter(Boolean));
const result = await build({
  entryPoints: [join(ROOT, 'dist', 'main.js')],
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', '@node-rs/argon2', 'sharp', '@opentelemetry/*', '@fastify/otel', 'import-in-the-middle', 'pg-native'],
  // CommonJS dependencies call `require` for Node's own modules; an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
  plugins: [ownModuleUrls],
  // Not `keepNames`: it held about 3 MB more in an idle server. A class that shares its name with
  // another in the bundle is renamed (`_InputError`), which a logged error's `err.type` would show;
  // the known errors are answered, not logged (docs/performance.md, decision 45).
  logLevel: 'warning',
  // Written below, escaped: a step that fails leaves the previous build's files as they were.
  write: false,
});
const escaped = result.outputFiles.map((file) => ({ path: file.path, text: oneByteSource(file.text, relative(OUT, file.path)) }));
for (const file of escaped) {
  await mkdir(dirname(file.path), { recursive: true });
  await writeFile(file.path, file.text);
}
const written = new Set(escaped.map((file) => relative(OUT, file.path)));
for (const file of await readdir(OUT)) {
  if (file !== '.written' && !written.has(file) && !previous.has(file)) await rm(join(OUT, file));
}
await writeFile(WRITTEN, `${[...written].join('\n')}\n`);
