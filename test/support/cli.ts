import { spawnSync } from 'node:child_process';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `svc` as a separate process, as an operator would, against the given database. */
export function svc(databaseUrl: string, args: string[], env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, BASE_URL: 'http://localhost:3000', ...env },
  });
  let json: unknown;
  try { json = JSON.parse(result.stdout); } catch { json = undefined; }
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, json };
}
