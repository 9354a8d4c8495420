/**
 * `npm run svc -- <command>` (INTERFACE section 9). Every command takes `--json` and then prints
 * one JSON object on stdout and nothing else. Bad arguments: one line on stderr, exit code 2.
 */
import { parseArgs } from 'node:util';
import { SettingsError, loadSettings } from '../config/settings.js';
import { ConflictError, InputError } from '../core/errors.js';
import { type Deps, createDeps, prepareDatabase } from '../deps.js';
import { type Command, UsageError } from './command.js';
import { clientCreate, clientDeactivate, clientRotateSecret } from './commands/clients.js';
import { postCreate, tokenCreate } from './commands/content.js';
import { demo, janitor, keysRotate, migrate } from './commands/operations.js';
import { userCreate, userSetStatus } from './commands/users.js';

const COMMANDS: readonly Command<any>[] = [
  userCreate, userSetStatus, clientCreate, clientRotateSecret, clientDeactivate,
  postCreate, tokenCreate, keysRotate, migrate, demo, janitor,
];

function usage(): string {
  return ['usage: npm run svc -- <command> [--json]', ...COMMANDS.map((c) => `  ${c.usage}`)].join('\n');
}

function findCommand(args: string[]): { command: Command<any>; rest: string[] } {
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    if (words.every((word, i) => args[i] === word)) return { command, rest: args.slice(words.length) };
  }
  const typed = args.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ');
  throw new UsageError(typed ? `unknown command "${typed}" (run with no arguments for the list)` : 'no command given');
}

export async function runCli(args: string[], io: { out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  let deps: Deps | undefined;
  try {
    if (args.length === 0 || args[0] === '--help' || args[0] === 'help') {
      io.out(`${usage()}\n`);
      return args.length === 0 ? 2 : 0;
    }
    const { command, rest } = findCommand(args);
    let values;
    try {
      ({ values } = parseArgs({ args: rest, options: { ...command.options, json: { type: 'boolean' } }, strict: true, allowPositionals: false }));
    } catch (error) {
      throw new UsageError(`${(error as Error).message.split('\n')[0]} (usage: ${command.usage})`);
    }
    deps = createDeps(loadSettings());
    await prepareDatabase(deps);
    const result = await command.run(deps, values);
    io.out(values.json ? `${JSON.stringify(result)}\n` : `${command.human(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof InputError || error instanceof ConflictError || error instanceof SettingsError) {
      io.err(`svc: ${error.message}\n`);
      return 2;
    }
    io.err(`svc: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await deps?.close();
  }
}

const code = await runCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
process.exitCode = code;
