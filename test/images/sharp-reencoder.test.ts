/**
 * The avatars' image library adapter: one image at a time per process, so uploads never hold the
 * worker threads that sign-ins need, and only a few wait their turn (src/images/sharp-reencoder.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { MAX_WAITING_IMAGES, childEnvironment, childFlags, decodeInChild, sharpReencoder } from '../../src/images/sharp-reencoder.js';
import { holdsWithin } from '../support/eventually.js';
import { isAlive, run } from '../support/processes.js';

const LIMITS = { maxPixels: 24_000_000, maxInputSide: 8192, maxSide: 512 };

/**
 * A process standing in for the server (test/support/avatar-decoding-parent.ts) with `nodeFlags`,
 * in `cwd` (else this one's), whose decoding child imports `sharpModule`'s text as `sharp`: through
 * NODE_OPTIONS, which the child is given, with `nodeOptions` after. Its files are written in `dir`.
 */
function serverWithSharp(dir: string, sharpModule: string, nodeFlags: string[] = [], cwd?: string, nodeOptions = '') {
  writeFileSync(join(dir, 'hook.mjs'), "import { register } from 'node:module';\nregister('./resolve.mjs', import.meta.url);\n");
  writeFileSync(join(dir, 'resolve.mjs'), "export function resolve(specifier, context, next) {\n  return specifier === 'sharp' ? { url: new URL('./sharp.mjs', import.meta.url).href, shortCircuit: true } : next(specifier, context);\n}\n");
  writeFileSync(join(dir, 'sharp.mjs'), sharpModule);
  const parent = fileURLToPath(new URL('../support/avatar-decoding-parent.ts', import.meta.url));
  return run(process.execPath, [...nodeFlags, '--import', import.meta.resolve('tsx'), parent], { NODE_OPTIONS: `--import ${pathToFileURL(join(dir, 'hook.mjs')).href} ${nodeOptions}` }, { cwd });
}

test('images arriving at once wait their turn; past the one decoding and the waiting ones they are refused as busy, and the rest are encoded', async () => {
  const png = new Uint8Array(await sharp({ create: { width: 600, height: 400, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer());
  const arriving = 1 + MAX_WAITING_IMAGES + 2;
  const answers = await Promise.all(Array.from({ length: arriving }, () => sharpReencoder.reencode(png, 'image/png', LIMITS)));
  assert.equal(answers.filter((a) => a === 'busy').length, 2);
  for (const answer of answers.filter((a) => a !== 'busy')) {
    assert.ok(answer instanceof Uint8Array);
    assert.equal((await sharp(answer).metadata()).width, 512);
  }
  // Once they are done, the next one is encoded again.
  assert.ok((await sharpReencoder.reencode(png, 'image/png', LIMITS)) instanceof Uint8Array);
});

test('the decoding child gets none of the service\'s secrets: only the variables Node and the allocator read', () => {
  const env = { PATH: '/usr/bin', NODE_OPTIONS: '--import tsx', MALLOC_MMAP_THRESHOLD_: '131072', KEYS_SECRET: 'k', DATABASE_URL: 'postgres://u:p@h/db', SMTP_URL: 'smtp://u:p@h', REDIS_URL: 'redis://:p@h' };
  assert.deepEqual(childEnvironment(env), { PATH: '/usr/bin', NODE_OPTIONS: '--import tsx', MALLOC_MMAP_THRESHOLD_: '131072' });
});

test('the decoding child gets the server\'s Node flags less --env-file, its preloads by relative path made absolute, since it works in another directory', () => {
  assert.deepEqual(
    childFlags(['--max-old-space-size=1536', '--env-file=.env', '--env-file', 'other.env', '--require', './instrumentation.cjs', '-r', 'dotenv/config', '--import=../otel.mjs', '--import', 'tsx'], '/srv/app'),
    ['--max-old-space-size=1536', '--require', '/srv/app/instrumentation.cjs', '-r', 'dotenv/config', '--import=/srv/otel.mjs', '--import', 'tsx'],
  );
  assert.equal(childEnvironment({ NODE_OPTIONS: '--require ./instrumentation.cjs  --import=tsx' }, '/srv/app').NODE_OPTIONS, '--require /srv/app/instrumentation.cjs --import=tsx');
  // Node takes `_` in an option's name for `-`.
  assert.deepEqual(
    childFlags(['--env_file=.env', '--env_file_if_exists', 'other.env', '--experimental_loader', './hooks.mjs', '--experimental_loader=../up_one.mjs'], '/srv/app'),
    ['--experimental_loader', '/srv/app/hooks.mjs', '--experimental-loader=/srv/up_one.mjs'],
  );
  // NODE_OPTIONS is read as Node reads it (words split at spaces outside double quotes), and a
  // path that holds a space is quoted again, or the child would read two words.
  assert.equal(childEnvironment({ NODE_OPTIONS: '--require "./my preload.cjs"' }, '/srv/app').NODE_OPTIONS, '--require "/srv/app/my preload.cjs"');
  assert.equal(childEnvironment({ NODE_OPTIONS: '--require ./instrumentation.cjs --max-old-space-size=1536' }, '/srv/my app').NODE_OPTIONS, '--require "/srv/my app/instrumentation.cjs" --max-old-space-size=1536');
  assert.equal(childEnvironment({ NODE_OPTIONS: '--import="./a \\"b\\".mjs" --title="x y"' }, '/srv').NODE_OPTIONS, '"--import=/srv/a \\"b\\".mjs" "--title=x y"');
});

test('a server working in a directory whose name holds a space, its preload named by a relative path in NODE_OPTIONS, still starts its decoding child', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'my app-'));
  try {
    writeFileSync(join(dir, 'instrumentation.cjs'), "process.stderr.write('preloaded\\n');\n");
    const server = serverWithSharp(dir, "process.stderr.write('child started\\n');\nexport default undefined;\n", [], dir, '--require ./instrumentation.cjs');
    assert.equal(await server.exited, 0, server.output());
    assert.match(server.output(), /child started/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a decoding child\'s answer is taken only as a refusal it may give or bytes of the type asked for: a child a hostile file took over gets anything else refused as undecodable', async () => {
  // Beside this file, as the real child is beside the server's code: the child works in its
  // module's directory, and from a directory outside the repository it could not even load the
  // `--import tsx` it is given, so it never ran and every answer read as undecodable.
  const dir = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.hostile-child-'));
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer());
  const job = { image: png, type: 'image/png' as const, limits: LIMITS };
  const answers: Record<string, string> = {
    'a string no refusal is': "'constructor'",
    'busy, which only the queue says': "'busy'",
    'an object': '{ length: 3 }',
    'bytes of another type': 'new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0, 0])',
    'markup': "new TextEncoder().encode('<html><script>alert(1)</script>')",
  };
  try {
    for (const [name, answer] of Object.entries(answers)) {
      const child = join(dir, `${name.replace(/\W/g, '-')}.mjs`);
      writeFileSync(child, `process.once('message', () => process.send(${answer}, () => process.disconnect()));\nprocess.send('ready');\n`);
      assert.equal(await decodeInChild(job, pathToFileURL(child)), 'undecodable', name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a decoding child ends with the server: a decoder stuck on a file does not outlive a server that was killed, whose timer would have ended it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stuck-decoder-'));
  // Its `sharp` never answers, as a decoder stuck on a file would not.
  const server = serverWithSharp(dir, "process.stderr.write(`decoding child ${process.pid}\\n`);\nsetInterval(() => {}, 1000);\nawait new Promise(() => {});\n");
  let child: number | undefined;
  try {
    child = Number(/decoding child (\d+)/.exec(await server.waitFor(/decoding child \d+/, 30_000))![1]);
    server.child.kill('SIGKILL');
    await server.exited;
    assert.ok(await holdsWithin(10_000, async () => !isAlive(child!)), 'the decoding child still runs after its server was killed');
  } finally {
    server.child.kill('SIGKILL');
    if (child !== undefined && isAlive(child)) process.kill(child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a server started with --env-file gives its decoding child none of that file\'s secrets: the child is not started with the flag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
  try {
    writeFileSync(join(dir, '.env'), 'KEYS_SECRET=from-the-env-file\n');
    const server = serverWithSharp(dir, "process.stderr.write(`child sees KEYS_SECRET: ${process.env.KEYS_SECRET ?? 'none'}\\n`);\nexport default undefined;\n", [`--env-file=${join(dir, '.env')}`]);
    assert.equal(await server.exited, 0, server.output());
    assert.match(server.output(), /child sees KEYS_SECRET: none/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a decoding child that cannot be started is the server\'s fault, not the file\'s: the member is told to try again, not that the file is unreadable', async () => {
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer());
  const node = process.execPath;
  // `fork` starts `process.execPath`: a path with nothing there fails as running out of processes would.
  process.execPath = join(tmpdir(), 'no-node-here', 'node');
  try {
    assert.equal(await decodeInChild({ image: png, type: 'image/png', limits: LIMITS }), 'busy');
  } finally {
    process.execPath = node;
  }
});

test('a decoding child whose start fails at once (spawn ENOTDIR, ENOMEM: errors `fork` throws rather than emits) answers busy too, never a rejection the upload turns into a 500', async () => {
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer());
  const node = process.execPath;
  // Node emits 'error' only for EACCES, EAGAIN, EMFILE, ENFILE and ENOENT; any other errno of the
  // start (ENOMEM when the machine is out of memory) is thrown by `fork` itself.
  process.execPath = '/etc/passwd/node';
  try {
    assert.equal(await decodeInChild({ image: png, type: 'image/png', limits: LIMITS }), 'busy');
  } finally {
    process.execPath = node;
  }
});

test('a decoding child that cannot load the library (sharp\'s native binary missing) answers busy, not undecodable: it ended before it was given the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'no-sharp-'));
  const png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer());
  const options = process.env.NODE_OPTIONS;
  try {
    writeFileSync(join(dir, 'hook.mjs'), "import { register } from 'node:module';\nregister('./resolve.mjs', import.meta.url);\n");
    writeFileSync(join(dir, 'resolve.mjs'), "export function resolve(specifier, context, next) {\n  return specifier === 'sharp' ? { url: new URL('./sharp.mjs', import.meta.url).href, shortCircuit: true } : next(specifier, context);\n}\n");
    writeFileSync(join(dir, 'sharp.mjs'), "throw new Error(\"Could not load the 'sharp' module using the linux-x64 runtime\");\n");
    // The child is given NODE_OPTIONS: through it, its `sharp` is one that cannot load.
    process.env.NODE_OPTIONS = `${options ?? ''} --import ${pathToFileURL(join(dir, 'hook.mjs')).href}`;
    assert.equal(await decodeInChild({ image: png, type: 'image/png', limits: LIMITS }), 'busy');
  } finally {
    if (options === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = options;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a server whose preload reads .env from its working directory (dotenv/config) gives its decoding child none of that file\'s secrets: the child works elsewhere, its preloads still found', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dotenv-'));
  try {
    writeFileSync(join(dir, '.env'), 'KEYS_SECRET=from-the-env-file\n');
    // What `--import dotenv/config` does: `.env` of the working directory into process.env.
    writeFileSync(join(dir, 'dotenv-config.mjs'), "import { existsSync, readFileSync } from 'node:fs';\nif (existsSync('.env')) for (const [, name, value] of readFileSync('.env', 'utf8').matchAll(/^(\\w+)=(.*)$/gm)) process.env[name] ??= value;\n");
    // Named by a relative path, as operators often name preloads: the child, which works
    // elsewhere, must still find it.
    const preload = ['--import', './dotenv-config.mjs'];
    const server = serverWithSharp(dir, "process.stderr.write(`child sees KEYS_SECRET: ${process.env.KEYS_SECRET ?? 'none'}\\n`);\nexport default undefined;\n", preload, dir);
    assert.equal(await server.exited, 0, server.output());
    assert.match(server.output(), /child sees KEYS_SECRET: none/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
