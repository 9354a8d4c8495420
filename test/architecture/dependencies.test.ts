/**
 * The dependency rule of docs/architecture.md, read from the imports of every file under src:
 * the core knows the rules and no framework, nothing imports a layer above its own, and the SQL
 * and HTTP libraries stay in the one layer that speaks them. A violation names the file and the
 * import.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

interface Import {
  readonly file: string;
  readonly specifier: string;
  /** The file under src a relative specifier names; `undefined` for a package. */
  readonly target: string | undefined;
}

/** Every module a source names: `import`, `export … from`, `import()`, `import('…').Type` and `declare module '…'`. */
function specifiers(fileName: string, source: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      // A computed specifier cannot be checked: refuse it, so none slips past the rule.
      found.push(argument && ts.isStringLiteralLike(argument) ? argument.text : `<computed: ${node.getText()}>`);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      found.push(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS));
  return found;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name).split('\\').join('/'))
    .sort();
}

function importsOf(file: string): Import[] {
  return specifiers(file, readFileSync(file, 'utf8')).map((specifier) => ({
    file,
    specifier,
    target: specifier.startsWith('.')
      ? relative('.', resolve(dirname(file), specifier)).split('\\').join('/').replace(/\.js$/, '.ts')
      : undefined,
  }));
}

const imports = sourceFiles('src').flatMap(importsOf);

/**
 * The layers, innermost first; a file may import its own layer and those below. `deps.ts` wires
 * the adapters to the core and hands the result (`Deps`) to the front doors, so it sits below them.
 */
const LAYERS: readonly { readonly name: string; readonly members: readonly string[] }[] = [
  { name: 'core', members: ['src/core/'] },
  {
    name: 'adapters',
    members: ['src/config/', 'src/storage/', 'src/ratelimit/', 'src/replay/', 'src/redis/', 'src/outbound/', 'src/mail/', 'src/images/', 'src/observability/', 'src/i18n/'],
  },
  { name: 'wiring', members: ['src/base-deps.ts', 'src/deps.ts', 'src/demo.ts', 'src/janitor.ts', 'src/logout-deliveries.ts', 'src/mail-deliveries.ts', 'src/hidden-flags.ts', 'src/queue-worker.ts', 'src/count-flush.ts'] },
  { name: 'front doors', members: ['src/http/', 'src/cli/'] },
  { name: 'the app', members: ['src/app.ts', 'src/main.ts', 'src/tick-shape.ts', 'src/server.ts', 'src/demo-app/'] },
];

function layerOf(file: string): number {
  const layer = LAYERS.findIndex(({ members }) => members.some((m) => (m.endsWith('/') ? file.startsWith(m) : file === m)));
  if (layer === -1) throw new Error(`${file} is in no layer: add it to LAYERS (and docs/architecture.md)`);
  return layer;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * What the rules themselves use: cryptography, password hashing, TOTP, Markdown, WebAuthn, and
 * Unicode's confusables and OpenCC's Traditional-to-Simplified table for look-alike names.
 */
const CORE_PACKAGES = new Set(['jose', '@node-rs/argon2', 'otpauth', 'markdown-it', '@simplewebauthn/server', 'unhomoglyph', 'opencc-js']);

function isCorePackage(specifier: string): boolean {
  return specifier.startsWith('node:') || CORE_PACKAGES.has(packageName(specifier));
}

function describe(found: readonly Import[], why: string): string[] {
  return found.map(({ file, specifier }) => `${file} imports '${specifier}': ${why}`);
}

test('the reader of imports sees static, type-only, re-exported, dynamic and augmented modules', () => {
  const source = [
    "import a from 'one';",
    "import type { B } from './two.js';",
    "export { c } from '../three.js';",
    "export * from 'four';",
    "const d = await import('five');",
    "let e: import('six').E;",
    "declare module 'seven' {}",
    "const f = await import(name);",
  ].join('\n');
  assert.deepEqual(specifiers('x.ts', source), ['one', './two.js', '../three.js', 'four', 'five', 'six', 'seven', '<computed: import(name)>']);
});

test('the core imports only Node built-ins and the libraries its rules use, never a framework, a database or a network client', () => {
  const found = imports.filter(({ file, target, specifier }) => file.startsWith('src/core/') && target === undefined && !isCorePackage(specifier));
  assert.deepEqual(describe(found, `the core may import only node:* and ${[...CORE_PACKAGES].join(', ')}`), []);
});

test('nothing under src/core imports from outside src/core', () => {
  const found = imports.filter(({ file, target }) => file.startsWith('src/core/') && target !== undefined && !target.startsWith('src/core/'));
  assert.deepEqual(describe(found, 'the core depends on nothing outside it'), []);
});

test('no file imports a layer above its own', () => {
  const found = imports.filter(({ file, target }) => target !== undefined && target.startsWith('src/') && layerOf(target) > layerOf(file));
  assert.deepEqual(
    found.map(({ file, specifier, target }) => `${file} imports '${specifier}': ${LAYERS[layerOf(file)]!.name} may not import ${LAYERS[layerOf(target!)]!.name}`),
    [],
  );
});

test('only storage speaks SQL: Kysely and the database drivers are imported under src/storage alone', () => {
  const sql = new Set(['kysely', 'pg', 'better-sqlite3']);
  const found = imports.filter(({ file, target, specifier }) => target === undefined && sql.has(packageName(specifier)) && !file.startsWith('src/storage/'));
  assert.deepEqual(describe(found, 'SQL belongs to src/storage'), []);
});

test('only the HTTP layer and the app that mounts it import the HTTP framework', () => {
  // @fastify/otel is OpenTelemetry's instrumentation of Fastify, started with the others by src/observability/tracing.ts.
  const framework = (specifier: string) => ['fastify', 'helmet', '@sinclair/typebox'].includes(packageName(specifier))
    || (specifier.startsWith('@fastify/') && specifier !== '@fastify/otel');
  const mayUse = (file: string) => file.startsWith('src/http/') || file.startsWith('src/demo-app/') || file === 'src/app.ts';
  const found = imports.filter(({ file, target, specifier }) => target === undefined && framework(specifier) && !mayUse(file));
  assert.deepEqual(describe(found, 'Fastify belongs to src/http, src/demo-app and src/app.ts'), []);
});
