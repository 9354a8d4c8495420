/**
 * Where a bench writes its figures: `--out FILE`, or else bench/results/<date>-<name>.json, where a
 * later run of the same day takes the next free `-2`, `-3`, … rather than write over an earlier one.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RESULTS = fileURLToPath(new URL('results', import.meta.url));

/** `path` (a `.json` file), or the first of `…-2.json`, `…-3.json`, … that `exists` does not find. */
export function unusedPath(path: string, exists: (path: string) => boolean = existsSync): string {
  if (!exists(path)) return path;
  const stem = path.replace(/\.json$/, '');
  for (let n = 2; ; n++) {
    const candidate = `${stem}-${n}.json`;
    if (!exists(candidate)) return candidate;
  }
}

/** Writes `report` as JSON to `out`, or to bench/results/<`date`'s day>-<name>[-N].json; returns the file. */
export function writeResults(report: object, name: string, date: string, out: string | undefined): string {
  const file = out ?? unusedPath(join(RESULTS, `${date.slice(0, 10)}-${name}.json`));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
