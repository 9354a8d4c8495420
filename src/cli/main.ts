/**
 * `npm run --silent svc -- <command>` (INTERFACE section 9), compiled: `node dist/cli/main.js`.
 * Every command takes `--json` and then prints one JSON object on stdout and nothing else.
 * Bad arguments: one line on stderr, exit code 2. `--help` prints usage and exits 0.
 * Audit events of what a command changed go to stderr as JSON lines (src/core/audit.ts).
 */
import { parseArgs } from 'node:util';
import { SettingsError, loadSettings } from '../config/settings.js';
import { AccountUnusableError, ConflictError, InputError, KeysSecretError } from '../core/errors.js';
import { terminalLine } from '../core/text.js';
import type { BaseDeps } from '../base-deps.js';
import type { AuditEvent, AuditSink } from '../core/audit.js';
import { type Command, type CommandIo, Interrupted, UsageError, type Values } from './command.js';
import { clientCreate, clientDeactivate, clientList, clientRequirePar, clientRotateSecret } from './commands/clients.js';
import { postCreate, tokenCreate, tokenList, tokenRevoke } from './commands/content.js';
import { demo, janitor, keysRotate, migrate } from './commands/operations.js';
import { staffLog, userSetRole } from './commands/staff.js';
import { userCreate, userList, userSetPassword, userSetStatus } from './commands/users.js';
import { commandHelp, commandHelpJson, overview, overviewJson } from './help.js';
import { terminalIo } from './terminal.js';

const COMMANDS: readonly Command<any>[] = [
  userCreate, userList, userSetStatus, userSetPassword, userSetRole,
  clientCreate, clientList, clientRotateSecret, clientDeactivate, clientRequirePar,
  postCreate, tokenCreate, tokenList, tokenRevoke,
  keysRotate, migrate, demo, janitor, staffLog,
];

const HELP_FLAGS = new Set(['--help', '-h']);

/** The command the leading words name, and the arguments after them. */
function findCommand(args: string[]): { command: Command<any>; rest: string[] } | undefined {
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    if (words.every((word, i) => args[i] === word)) return { command, rest: args.slice(words.length) };
  }
  return undefined;
}

function unknownCommand(args: string[]): UsageError {
  const words = args.filter((a) => !a.startsWith('-')).slice(0, 2);
  const nouns = COMMANDS.filter((c) => c.name.split(' ')[0] === words[0]).map((c) => c.name);
  if (words.length === 0) return new UsageError('no command given (svc --help lists them)');
  if (nouns.length > 0 && words.length === 1) return new UsageError(`"${words[0]}" needs one of: ${nouns.join(', ')}`);
  return new UsageError(`unknown command "${words.join(' ')}" (svc --help lists them)`);
}

export interface CliIo extends Omit<CommandIo, 'afterAnswer'> {
  /** Writes on standard output; what it answers settles once the text is written, or fails as the write did. */
  out(text: string): void | Promise<void>;
  err(text: string): void;
}

/** What an unexpected failure says, its first line: a stack or a database's detail may follow. */
const firstLine = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

/** Writes `text` on standard error if it can; when standard error itself fails there is nowhere left to say it. */
function tell(io: CliIo, text: string): void {
  try {
    io.err(text);
  } catch {
    // Nowhere left to say it.
  }
}

/** `--help` anywhere: the overview, a noun's commands, or one command's options. */
async function help(args: string[], io: CliIo): Promise<number> {
  const json = args.includes('--json');
  const words = args.filter((a) => !a.startsWith('-'));
  const found = findCommand(words);
  if (found) {
    await io.out(json ? `${JSON.stringify(commandHelpJson(found.command))}\n` : commandHelp(found.command));
    return 0;
  }
  const noun = words.length === 1 ? COMMANDS.filter((c) => c.name.split(' ')[0] === words[0]) : [];
  if (words.length > 0 && noun.length === 0) throw unknownCommand(words);
  const listed = words.length === 0 ? COMMANDS : noun;
  await io.out(json ? `${JSON.stringify(overviewJson(listed))}\n` : overview(listed));
  return 0;
}

/**
 * The command's options, or a UsageError saying what is wrong with them: parseArgs's own message,
 * but for a value that starts with "-" (parseArgs calls it ambiguous) and for an option of one
 * value given twice (parseArgs would keep the last without a word).
 */
function parseOptions(command: Command<any>, args: string[]): Values {
  const help = `(svc ${command.name} --help)`;
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...command.options, json: { type: 'boolean' } }, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec((error as Error).message);
    const value = ambiguous ? args[args.indexOf(ambiguous[1]!) + 1] : undefined;
    if (ambiguous && value !== undefined) {
      throw new UsageError(`${ambiguous[1]} is followed by "${value}", which is read as an option; if it is the value, write ${ambiguous[1]}=${value} ${help}`);
    }
    throw new UsageError(`${(error as Error).message.split('\n')[0]} ${help}`);
  }
  const given = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || command.options[token.name]?.type !== 'string' || command.options[token.name]?.multiple) continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given twice; give it once ${help}`);
    given.add(token.name);
  }
  return parsed.values;
}

/**
 * The audit sink of one command: its events are held until its answer is printed, then written
 * (`flush`) to standard error. A command that prints a new secret (`client create`, `client
 * rotate-secret`, `token create`) has made it the app's or the account's by then: written first,
 * an audit line that could not be (standard error on a full disk) failed the command after the
 * write and the secret was never printed. A line that cannot be written now loses the line, not
 * the answer, and the exit code stays the command's: a script that saw it fail would run it again.
 */
function heldAudit(io: CliIo, sink: AuditSink): AuditSink & { flush(): void } {
  const held: AuditEvent[] = [];
  return {
    record: (event) => { held.push(event); },
    flush() {
      try {
        for (const event of held.splice(0)) sink.record(event);
      } catch (error) {
        tell(io, terminalLine(`svc: an audit line could not be written: ${firstLine(error)}`));
      }
    },
  };
}

/**
 * What a command asked to run once its answer is printed (`CommandIo.afterAnswer`), for the reason
 * `heldAudit` holds the audit lines: its change is made and, for a new secret, printed only now;
 * a failure here (an owner's notice mail that could not be queued) is a line, not the answer lost.
 */
function afterAnswers(io: CliIo): { add: CommandIo['afterAnswer']; run(): Promise<void> } {
  const held: Array<{ what: string; work: () => Promise<unknown> }> = [];
  return {
    add: (what, work) => { held.push({ what, work }); },
    async run() {
      for (const { what, work } of held.splice(0)) {
        try {
          await work();
        } catch (error) {
          tell(io, terminalLine(`svc: ${what}: ${firstLine(error)}`));
        }
      }
    },
  };
}

export async function runCli(args: string[], io: CliIo): Promise<number> {
  let deps: BaseDeps | undefined;
  let audit: ReturnType<typeof heldAudit> | undefined;
  const after = afterAnswers(io);
  try {
    if (args.some((a) => HELP_FLAGS.has(a)) || args[0] === 'help') return await help(args.filter((a) => a !== 'help'), io);
    const found = findCommand(args);
    if (!found) throw unknownCommand(args);
    const { command, rest } = found;
    const values = parseOptions(command, rest);
    const settings = loadSettings();
    // Loaded once the arguments are known good: the database drivers are most of a command's
    // start. Only the database's part of the dependencies: no metrics, no Redis client.
    const [{ createBaseDeps, prepareDatabase }, { pinoAuditSink }] = await Promise.all([
      import('../base-deps.js'), import('../observability/audit.js'),
    ]);
    audit = heldAudit(io, pinoAuditSink({ logLevel: settings.logLevel, destination: 2 }));
    deps = createBaseDeps(settings, { audit });
    await prepareDatabase(deps);
    const result = await command.run(deps, values, { ...io, afterAnswer: after.add });
    try {
      await io.out(values.json ? `${JSON.stringify(result)}\n` : `${command.human(result)}\n`);
    } catch (error) {
      // The change is made (a secret's rotation committed): only its answer is lost. Said in one
      // line with exit code 1, before the audit lines and what follows the change (the owner's
      // notice), which still run: standard output failing (a full disk, a closed pipe) was an
      // unhandled 'error' event that ended the process with a stack trace and ran neither (attack82).
      tell(io, terminalLine(`svc: the answer could not be written to standard output: ${firstLine(error)}; what the command changed is changed (a secret it printed is lost: make another)`));
      return 1;
    }
    return 0;
  } catch (error) {
    // What the command changed before it failed is told before why it failed.
    audit?.flush();
    if (error instanceof Interrupted) {
      io.err('svc: interrupted; nothing was changed\n');
      return 130;
    }
    // A KEYS_SECRET that is missing or wrong is a setting at fault, as SettingsError is; an
    // account that is not active, named for a token or an app, is an argument at fault.
    if (error instanceof UsageError || error instanceof InputError || error instanceof ConflictError || error instanceof SettingsError
      || error instanceof KeysSecretError || error instanceof AccountUnusableError) {
      // One line, whatever the refused value held (an ESC, a newline): it quotes what was typed.
      io.err(terminalLine(`svc: ${error.message}`));
      return 2;
    }
    io.err(terminalLine(`svc: failed: ${firstLine(error)}`));
    return 1;
  } finally {
    // Before the audit lines: what follows a change may write some of its own.
    await after.run();
    audit?.flush();
    await deps?.close();
  }
}

// A standard error that cannot be written (a full disk) fails its writes later, as an 'error'
// event: unheard, it ended the process with exit code 1 after the answer was out (`heldAudit`).
process.stderr.on('error', () => {});
// Standard output's failures are the write's own (`out` fails with them, and `runCli` says so):
// unheard as an 'error' event, one ended the process before the answer's failure was told.
process.stdout.on('error', () => {});
const io: CliIo = {
  ...terminalIo(),
  out: (s) => new Promise<void>((resolve, reject) => {
    process.stdout.write(s, (error) => (error ? reject(error) : resolve()));
  }),
  err: (s) => process.stderr.write(s),
};
process.exitCode = await runCli(process.argv.slice(2), io);
