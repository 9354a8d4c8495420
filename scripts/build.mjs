// Compiles src/ into dist/, and bundles the server into dist/bundle/, only when the sources
// changed since the last build, so `npm start` and `npm run svc` start in about a second instead
// of recompiling every time (issue 21).
//
//   node scripts/build.mjs                   build if a source changed (silent when none did)
//   node scripts/build.mjs --force           build whatever changed (`npm run build`)
//   node scripts/build.mjs --check-settings  first validate the settings, as `npm start` will,
//                                            so a bad one is reported before any build
//
// "Changed" is a SHA-256 of every input (src/, the tsconfig files, package-lock.json, the
// bundling script) compared with the one the last successful build wrote to dist/.build-hash:
// contents, not times, so a checkout or a copy that keeps old times cannot leave dist/ stale.
// tsc runs with --incremental (dist/.tsbuildinfo), so a small change rebuilds in part. Builds by
// several processes at once (tests, `npm run cluster` beside `npm start`) take turns under a lock
// directory.
// Everything this script says goes to standard error: standard output belongs to the command
// that runs after it (`svc … --json` prints one JSON object there).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const DIST = join(ROOT, 'dist');
const HASH_FILE = join(DIST, '.build-hash');
const LOCK = join(ROOT, '.build-lock');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/bundle-service.mjs', 'scripts/one-byte-source.mjs'];
/** The entry points; a dist/ without them is rebuilt from scratch whatever its hash says. */
const ENTRY_POINTS = ['main.js', 'cli/main.js', 'config/settings.js', 'bundle/main.js'];
const NO_DEV_DEPENDENCIES = 'dist/ is missing or older than src/, and the dev dependencies that build it are not installed: run `npm ci`, then `npm run build`';

/** The SHA-256 of every build input, by path and content. */
export function sourceHash() {
  const hash = createHash('sha256');
  const files = readdirSync(join(ROOT, 'src'), { recursive: true })
    .map((f) => join('src', String(f)))
    .filter((f) => f.endsWith('.ts'))
    .sort();
  for (const file of [...INPUTS, ...files]) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function builtHash() {
  if (!ENTRY_POINTS.every((f) => existsSync(join(DIST, f)))) return undefined;
  try { return readFileSync(HASH_FILE, 'utf8').trim(); } catch { return undefined; }
}

export function isBuilt() {
  return builtHash() === sourceHash();
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Holds the build lock while `work` runs; a lock left by a process that died is taken over. */
function withLock(work) {
  for (let waited = 0; ; waited += 100) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder = Number.NaN;
      try { holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8')); } catch { /* being written or removed */ }
      if (Number.isInteger(holder) && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
      else if (waited > 300_000) throw new Error(`another build has held ${LOCK} for 5 minutes; remove it if no build runs`);
      else sleep(100);
    }
  }
  try {
    return work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Builds dist/ unless it already matches the sources (or always, with `force`). Throws when tsc
 * fails; its messages are on standard error.
 */
export function ensureBuilt({ force = false } = {}) {
  if (!force && isBuilt()) return { built: false };
  return withLock(() => {
    // Another process may have built while this one waited for the lock.
    const hash = sourceHash();
    if (!force && builtHash() === hash) return { built: false };
    // tsc --incremental trusts its .tsbuildinfo even when outputs were deleted: start afresh then.
    if (!ENTRY_POINTS.every((f) => existsSync(join(DIST, f)))) rmSync(join(DIST, '.tsbuildinfo'), { force: true });
    process.stderr.write(!existsSync(HASH_FILE) ? 'Building dist/ from src/ (the first build takes a while)…\n'
      : builtHash() === hash ? 'Building dist/…\n'
      : 'Building dist/: the sources changed since the last build…\n');
    const started = Date.now();
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    if (!existsSync(tsc)) throw new Error(NO_DEV_DEPENDENCIES);
    // tsc writes its diagnostics to standard output; they go to standard error here.
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', join(DIST, '.tsbuildinfo')], {
      cwd: ROOT, stdio: ['ignore', 2, 2],
    });
    if (result.status !== 0) throw new Error(`the build failed (tsc exit ${result.status ?? result.signal})`);
    // The server `npm start` runs is one bundle of what tsc wrote (scripts/bundle-service.mjs).
    const bundled = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bundle-service.mjs')], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (bundled.status !== 0) throw new Error(`the build failed (bundling exit ${bundled.status ?? bundled.signal})`);
    writeFileSync(HASH_FILE, `${hash}\n`);
    process.stderr.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
    return { built: true };
  });
}

/**
 * Validates the settings the way `npm start` will, before any build: through dist/ when it is up
 * to date, else straight from src/ (tsx, a dev dependency, as is the TypeScript a build needs).
 * Returns the one line `src/main.ts` would print, or `undefined` when they are valid.
 */
async function settingsProblem() {
  const module = isBuilt()
    ? await import(pathToFileURL(join(DIST, 'config', 'settings.js')).href)
    : await (await import('tsx/esm/api').catch(() => { throw new Error(NO_DEV_DEPENDENCIES); }))
      .tsImport(pathToFileURL(join(ROOT, 'src', 'config', 'settings.ts')).href, import.meta.url);
  try {
    module.loadSettings();
    return undefined;
  } catch (error) {
    if (error instanceof module.SettingsError) return error.message;
    throw error;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flags = new Set(process.argv.slice(2));
  const known = new Set(['--force', '--check-settings']);
  const unknown = [...flags].filter((f) => !known.has(f));
  if (unknown.length > 0) {
    process.stderr.write(`build: unknown option ${unknown[0]} (use --force or --check-settings)\n`);
    process.exit(2);
  }
  try {
    if (flags.has('--check-settings')) {
      const problem = await settingsProblem();
      if (problem !== undefined) {
        process.stderr.write(`${problem}\n`);
        process.exit(2);
      }
    }
    ensureBuilt({ force: flags.has('--force') });
  } catch (error) {
    process.stderr.write(`build: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
