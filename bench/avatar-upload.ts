/**
 * `npm run bench -- --avatar-upload [--iterations 10] [--out FILE]`: what checking one avatar
 * upload costs (issue 30 item 4), i.e. `checkAvatarUpload` with sharp: decode under the pixel
 * limit, turn upright, shrink to 512 × 512, encode anew. No HTTP and no database: the upload route
 * adds the multipart read, one write and the answer (`--route` measures it whole).
 *
 * Each input runs in a child process of its own (pinned to one core, as the servers of the main
 * bench), uploads one after the other, so its peak RSS (VmHWM) is that input's alone; the figures
 * are the median and the slowest of its iterations, the RSS before the first image, and the peak
 * of the processes that decode (the reencoder forks one per image).
 * Writes bench/results/<date>-avatar-upload.json.
 *
 * With `--route` (bench/avatar-route.ts), the same inputs go through our server's upload route instead.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem, type as osType, release as osRelease } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { AVATAR_MAX_BYTES, AVATAR_MAX_PIXELS, checkAvatarUpload } from '../src/core/community/avatars.js';
import { sharpReencoder } from '../src/images/sharp-reencoder.js';
import { pngDeclaring } from '../test/support/images.js';
import { AVATAR_UPLOAD_OPTIONS, BENCH_HINT, parseBenchArguments, runBenchMain, wholeNumber } from './arguments.js';
import { writeResults } from './results-file.js';
import { median } from './statistics.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Input { id: string; title: string; make: () => Promise<Uint8Array> }

/** A smooth picture: noise at a fortieth of the size, blown up, so it compresses as photos do. */
const photo = (width: number, height: number) => sharp({ create: { width: Math.round(width / 40), height: Math.round(height / 40), channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } })
  .resize(width, height, { kernel: 'cubic' });

export const INPUTS: Input[] = [
  { id: 'photo-12mp', title: '4000×3000 JPEG photo (12 MP)', make: async () => photo(4000, 3000).jpeg({ quality: 50 }).toBuffer() },
  { id: 'png-at-limit', title: `6000×4000 PNG of one colour (${AVATAR_MAX_PIXELS / 1e6} MP, the limit)`, make: async () => sharp({ create: { width: 6000, height: 4000, channels: 3, background: '#3366aa' } }).png().toBuffer() },
  { id: 'png-small', title: '256×256 PNG', make: async () => photo(260, 260).resize(256, 256).png().toBuffer() },
  { id: 'bomb', title: 'PNG declaring 50,000×50,000 (refused)', make: async () => pngDeclaring(50_000, 50_000) },
];

interface Figures { bytes: number; outcome: string; medianMs: number; maxMs: number; baselineRssMb: number; peakRssMb: number; childPeakRssMb: number }

/** In the child: `iterations` checks of the file, one after the other. */
async function measure(file: string, iterations: number): Promise<Figures> {
  const bytes = new Uint8Array(readFileSync(file));
  const baselineRssMb = process.memoryUsage().rss / 2 ** 20;
  const times: number[] = [];
  let outcome = '';
  // The reencoder decodes in a child process of its own (src/images/sharp-reencoder.ts).
  const children = watchChildren(process.pid);
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    outcome = await checkAvatarUpload(bytes, sharpReencoder).then(
      ({ image }) => `stored, ${(image.length / 1024).toFixed(1)} KB`,
      (error: unknown) => `refused: ${(error as Error).message}`,
    );
    times.push(performance.now() - started);
  }
  const { childPeakRssMb } = children.stop();
  const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return { bytes: bytes.length, outcome, ...spread(times), baselineRssMb: round(baselineRssMb), peakRssMb: round(Number(peak) / 1024), childPeakRssMb };
}

/** To a tenth. */
export const round = (n: number) => Math.round(n * 10) / 10;

/** The median and the slowest of an input's times (ms). */
export function spread(times: readonly number[]): { medianMs: number; maxMs: number } {
  return { medianMs: round(median(times)), maxMs: round(Math.max(...times)) };
}

/**
 * Watches `pid`'s child processes until stopped: the largest VmHWM read (MB; the last read before
 * a child exits is at most a millisecond late, so this is a floor) and the children seen.
 */
export function watchChildren(pid: number) {
  let peak = 0;
  const seen = new Set<number>();
  const read = (path: string) => { try { return readFileSync(path, 'utf8'); } catch { return ''; } };
  const timer = setInterval(() => {
    for (const child of read(`/proc/${pid}/task/${pid}/children`).split(' ').filter(Boolean)) {
      seen.add(Number(child));
      const kb = /VmHWM:\s+(\d+) kB/.exec(read(`/proc/${child}/status`))?.[1];
      if (kb !== undefined) peak = Math.max(peak, Number(kb) / 1024);
    }
  }, 1);
  return { stop: () => { clearInterval(timer); return { childPeakRssMb: round(peak), children: seen.size }; } };
}

/** Each input's file (under the upload limit), in `dir`. */
export async function inputFiles(dir: string): Promise<Array<Input & { file: string }>> {
  const files: Array<Input & { file: string }> = [];
  for (const input of INPUTS) {
    const bytes = await input.make();
    if (bytes.length > AVATAR_MAX_BYTES) throw new Error(`${input.id} is ${bytes.length} bytes: over the upload limit`);
    const file = join(dir, input.id);
    writeFileSync(file, bytes);
    files.push({ ...input, file });
  }
  return files;
}

/** Writes an avatar report to `out`, or to bench/results/<date>-<name>[-N].json (`writeResults`), with the machine and sharp's versions. */
export function writeAvatarReport(name: string, out: string | undefined, report: { setup: object; inputs: object[]; notes: string[] }): void {
  const cpu = cpus();
  const date = new Date().toISOString();
  const full = {
    date,
    machine: { cpu: cpu[0]?.model ?? 'unknown', cores: cpu.length, memoryGb: Math.round(totalmem() / 1e8) / 10, os: `${osType()} ${osRelease()}`, node: process.version, sharp: sharp.versions.sharp, vips: sharp.versions.vips },
    ...report,
  };
  const file = writeResults(full, name, date, out);
  process.stderr.write(`results written to ${file}\n`);
}

async function main(): Promise<void> {
  const values = parseBenchArguments(AVATAR_UPLOAD_OPTIONS);
  const iterations = wholeNumber(values.iterations, '--iterations', 1);
  if (values.route) return (await import('./avatar-route.js')).runAvatarRoute(iterations, values.out);
  if (typeof values.child === 'string') {
    process.stdout.write(JSON.stringify(await measure(values.child, iterations)));
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'avatar-bench-'));
  const results: Array<{ id: string; title: string } & Figures> = [];
  try {
    for (const input of await inputFiles(dir)) {
      const out = execFileSync('taskset', ['-c', '0', process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url), '--child', input.file, '--iterations', String(iterations)], { cwd: ROOT, encoding: 'utf8' });
      const figures = JSON.parse(out) as Figures;
      results.push({ id: input.id, title: input.title, ...figures });
      process.stderr.write(`${input.id}: ${figures.outcome}; median ${figures.medianMs} ms, max ${figures.maxMs} ms, peak RSS ${figures.peakRssMb} MB, decoding child ${figures.childPeakRssMb} MB\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  writeAvatarReport('avatar-upload', values.out, {
    setup: { iterations, core: 0, maxPixels: AVATAR_MAX_PIXELS, maxBytes: AVATAR_MAX_BYTES },
    inputs: results,
    notes: [
      'checkAvatarUpload with sharp, in one process per input pinned to core 0; uploads one after the other',
      'peakRssMb is the process\'s VmHWM after the iterations (Node, tsx, and sharp, which the bench loads to make its inputs); baselineRssMb is its RSS before the first image; childPeakRssMb the largest VmHWM of a decoding child (src/images/sharp-child.ts) read every millisecond while it lived, so a floor',
    ],
  });
}

export { main as runAvatarUploadBench };

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runBenchMain(main, BENCH_HINT);
