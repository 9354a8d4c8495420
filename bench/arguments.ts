/** The bench's options as typed after `npm run bench --`, read by each of its modes, and by the benches run on their own. */
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** What was typed wrong: one line on stderr and exit code 2, as the command line's bad arguments. */
export class BenchUsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `--avatar-upload`'s options (bench/avatar-upload.ts, bench/avatar-route.ts; `--child` is how it
 * runs itself per input). Here, not there, so `npm run bench` knows which take a value without
 * loading sharp: `--iterations --help` is refused as `--note --help` is, not taken for help.
 */
export const AVATAR_UPLOAD_OPTIONS = {
  'avatar-upload': { type: 'boolean' }, route: { type: 'boolean' }, child: { type: 'string' }, iterations: { type: 'string', default: '10' }, out: { type: 'string' },
} as const satisfies Options;

/** `--posts-pieces`'s options (bench/posts-pieces.ts). */
export const POSTS_PIECES_OPTIONS = {
  'posts-pieces': { type: 'boolean' }, iterations: { type: 'string', default: '2000' }, out: { type: 'string' },
} as const satisfies Options;

/** The options typed, or a `BenchUsageError` naming what `parseArgs` refused (an unknown option, a missing value). */
export function parseBenchArguments<O extends Options>(options: O) {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    // Node's parseArgs errors (ERR_PARSE_ARGS_*) name the option in their first sentence; the rest is advice for scripts.
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) throw new BenchUsageError((error as Error).message.split(/\.\s/)[0]!);
    throw error;
  }
}

/** `typed` as a whole number from `least`; else a usage error naming the option (Number('abc') ran a whole bench of NaN-second loads). */
export function wholeNumber(typed: string, option: string, least: number): number {
  const value = Number(typed);
  if (!/^\d+$/.test(typed) || !Number.isSafeInteger(value) || value < least) throw new BenchUsageError(`${option} must be a whole number from ${least}: got '${typed}'`);
  return value;
}

/** Where `npm run bench`'s options are told, after a usage error's line. */
export const BENCH_HINT = 'npm run bench -- --help lists the options';

/** A usage error as one line on stderr, followed by `hint` (where the options are told), and exit code 2. */
export function refuseUsage(error: BenchUsageError, hint: string): never {
  process.stderr.write(`bench: ${error.message}; ${hint}\n`);
  process.exit(2);
}

/** Runs a bench's `main`: a usage error is `refuseUsage`'s line, anything else its stack and exit code 1. */
export function runBenchMain(main: () => Promise<void>, hint: string): void {
  main().catch((error: unknown) => {
    if (error instanceof BenchUsageError) refuseUsage(error, hint);
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}

/** `read()` at a script's top level, which has no `main` to catch its usage error: what it answers, or `refuseUsage`. */
export function readBenchArguments<T>(read: () => T, hint: string): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof BenchUsageError) refuseUsage(error, hint);
    throw error;
  }
}
