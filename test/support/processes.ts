/**
 * The service as an operator runs it: real processes (`npm start`, `node dist/bundle/main.js`,
 * the cluster script), their output read as it comes, their process trees inspected after a signal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { ensureBuilt } from '../../scripts/build.mjs';
import { serviceEntry } from '../../scripts/service-node-flags.mjs';

let built = false;

/** dist/ as `npm start` would build it; the tests of compiled entry points call this first. */
export function compiled(): void {
  if (built) return;
  ensureBuilt();
  built = true;
}

/** The file `npm start` runs (the bundled server); the tests start the service from it as operators do. */
export const SERVICE_ENTRY: string = serviceEntry();

export interface Running {
  readonly child: ChildProcess;
  /** Everything written to stdout and stderr so far, in arrival order. */
  output(): string;
  /** Standard output alone (the server's log lines and banner). */
  stdout(): string;
  /**
   * Resolves with the output once `pattern` appears in it; rejects if the process exits first,
   * or after `timeoutMs` (so a test that waits for the wrong thing fails instead of hanging).
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
}

/** Starts `command` with only the given environment (and PATH, HOME), reading its output. */
export function run(command: string, args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Running {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let out = '';
  const waiters: Array<{ pattern: RegExp; resolve(s: string): void; reject(e: Error): void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(all)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(all);
      }
    }
  };
  child.stdout!.on('data', (d: Buffer) => { all += d; out += d; check(); });
  child.stderr!.on('data', (d: Buffer) => { all += d; check(); });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`exited (${code ?? signal}) before ${waiter.pattern}: ${all}`));
      resolve(code ?? signal ?? -1);
    });
  });
  return {
    child,
    output: () => all,
    stdout: () => out,
    exited,
    waitFor: (pattern, timeoutMs = 120_000) => new Promise((resolve, reject) => {
      if (pattern.test(all)) return resolve(all);
      if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`exited before ${pattern}: ${all}`));
      const waiter = {
        pattern,
        resolve: (s: string) => { clearTimeout(timer); resolve(s); },
        reject: (e: Error) => { clearTimeout(timer); reject(e); },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms: ${all}`));
      }, timeoutMs);
      waiters.push(waiter);
      return undefined;
    }),
  };
}

/** Every live process below `pid` (Linux /proc), children first. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8'); } catch { continue; }
    // The command may hold spaces and parentheses: the fields that follow the last ')' are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped) is gone for every purpose here.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether anything answers HTTP on the port. */
export async function answers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}
