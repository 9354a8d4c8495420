import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { compiled } from './processes.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

function result(status: number | null, stdout: string, stderr: string): CliResult {
  let json: unknown;
  try { json = JSON.parse(stdout); } catch { json = undefined; }
  return { code: status ?? -1, stdout, stderr, json };
}

function environment(databaseUrl: string, env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, BASE_URL: 'http://localhost:3000', ...env };
}

/**
 * Runs the compiled `svc` (what `npm run svc` runs) as a separate process, as an operator would,
 * against the given database. `input` is its standard input (a pipe, never a terminal).
 */
export function svc(databaseUrl: string, args: string[], env: Record<string, string> = {}, input = ''): CliResult {
  compiled();
  const run = spawnSync(process.execPath, ['dist/cli/main.js', ...args], { encoding: 'utf8', input, env: environment(databaseUrl, env) });
  return result(run.status, run.stdout, run.stderr);
}

/**
 * `svc` as `svc`, with its standard error written to `path` instead of read: `/dev/full` fails
 * every write there as a full disk does. `stderr` is then empty.
 */
export function svcWithStderrAt(path: string, databaseUrl: string, args: string[]): CliResult {
  compiled();
  const stderr = openSync(path, 'w');
  try {
    const run = spawnSync(process.execPath, ['dist/cli/main.js', ...args], { encoding: 'utf8', env: environment(databaseUrl, {}), stdio: ['pipe', 'pipe', stderr] });
    return result(run.status, run.stdout, '');
  } finally {
    closeSync(stderr);
  }
}

/**
 * Runs `svc` on a terminal (util-linux `script` gives it a pseudo-terminal) and answers each
 * prompt in turn once it shows, as a person would. Returns everything the terminal showed: what
 * was typed appears in it only if the terminal echoed it.
 */
export function svcAtTerminal(databaseUrl: string, args: string[], answers: Array<{ prompt: RegExp; type: string }>): Promise<{ code: number; screen: string }> {
  compiled();
  const command = ['node', 'dist/cli/main.js', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: environment(databaseUrl, {}), stdio: ['pipe', 'pipe', 'inherit'] });
  let screen = '';
  let answered = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk;
    // Each answer is typed once its own prompt (the n-th one) has shown.
    while (answered < answers.length && (screen.match(new RegExp(answers[answered]!.prompt.source, 'g')) ?? []).length > countBefore(answered)) {
      child.stdin.write(answers[answered]!.type);
      answered += 1;
    }
  });
  const countBefore = (n: number) => answers.slice(0, n).filter((a) => a.prompt.source === answers[n]!.prompt.source).length;
  return new Promise((resolve) => child.on('exit', (code) => { child.stdin.end(); resolve({ code: code ?? -1, screen }); }));
}

/** A setting's value holding what a refusal must not pass on as it is: a direction override, a newline, an ESC, a backslash, a quote. */
export const HOSTILE_PORT = '80\u202e\n\x1b[31m\\"x';
/** `HOSTILE_PORT` as the one line of a refusal shows it: quoted, its quote doubled, the rest escaped once. */
export const HOSTILE_PORT_SHOWN = '"80\\u{202e}\\u{a}\\u{1b}[31m\\\\""x"';
