/** Directories the service writes its files in (the embedded database, the demo's credentials). */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p`: makes `path` and each missing parent with `mode`, or throws one line naming what
 * the directory is for (`what`) and the one it could not make. Not `mkdirSync(path, { recursive: true })`: Node 20's spins for ever at full CPU when a
 * directory cannot be made in a parent that exists (`/proc/nope`: ENOENT from a filesystem that
 * makes none, taken for a missing parent, whose mkdir says EEXIST, and again), so a start on
 * `DATABASE_URL=sqlite:/proc/nope/x.sqlite` never ended.
 */
export function makeDirectories(path: string, mode: number, what: string): void {
  const missing: string[] = [];
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      // Another process (a second instance starting) made it first: as good.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      const reason = (error as Error).message.replace(/, mkdir .*$/s, '');
      throw new Error(`cannot create ${what}, ${path}: mkdir ${dir}: ${reason}`, { cause: error });
    }
  }
}
