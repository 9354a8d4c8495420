/** The bench's options as typed after `npm run bench --`, read by each of its modes. */
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** What was typed wrong: one line on stderr and exit code 2, as the command line's bad arguments. */
export class BenchUsageError extends Error {}

/** The options typed, or a `BenchUsageError` naming what `parseArgs` refused (an unknown option, a missing value). */
export function parseBenchArguments<O extends NonNullable<ParseArgsConfig['options']>>(options: O) {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    // Node's parseArgs errors (ERR_PARSE_ARGS_*) name the option in their first sentence; the rest is advice for scripts.
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) throw new BenchUsageError((error as Error).message.split(/\.\s/)[0]!);
    throw error;
  }
}
