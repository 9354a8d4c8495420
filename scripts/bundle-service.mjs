// Bundles the server tsc compiled (dist/main.js and all it imports, our modules and the
// dependencies written in JavaScript) into dist/bundle/, which `npm start` runs. One bundle
// instead of about a thousand ES modules: V8 keeps the source text of every module it loads, and
// each module has its own records, so the server holds about 8 MB less at its peak
// (docs/performance.md, decision 45). Run by scripts/build.mjs after tsc, under its lock.
//
// What stays outside the bundle, loaded from node_modules as before:
// - native addons (better-sqlite3, @node-rs/argon2, sharp);
// - OpenTelemetry, its hook and @fastify/otel: its instrumentations patch modules as Node loads
//   them, and it is loaded only when traces are exported (src/main.ts);
// - what the code names at run time only (`createRequire(…)('pg')`, ioredis, swagger-ui-dist's
//   files), which a bundler cannot see.
// Dynamic imports stay lazy: each becomes a chunk of its own, loaded at its first use (decision 29).
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const OUT = join(ROOT, 'dist', 'bundle');
const IMPORT_META_URL = /\bimport\.meta\.url\b/g;

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

await rm(OUT, { recursive: true, force: true });
await build({
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
  logLevel: 'warning',
});
