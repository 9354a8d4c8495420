/** What every command of the command line is: options, a run, and how to show its result. */
import type { ParseArgsConfig } from 'node:util';
import type { BaseDeps } from '../base-deps.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command<R extends object = object> {
  /** "noun verb" or a single word, as typed. */
  readonly name: string;
  /** A few words: what it does, for the list of commands. */
  readonly summary: string;
  /** What it does in full, for its `--help`. */
  readonly description: string;
  /** The options as typed after the name, e.g. `--username U [--member]`. */
  readonly usage: string;
  readonly options: Options;
  /** One line per option (by its long name), for `--help`. */
  readonly help: Readonly<Record<string, string>>;
  /** What `--json` prints, as the README's table shows it. */
  readonly prints: string;
  /** Commands get the database and the audit sink, not the server's parts (src/base-deps.ts). */
  run(deps: BaseDeps, values: Values, io: CommandIo): Promise<R>;
  /** The result for a person; `--json` prints `R` itself. */
  human(result: R): string;
}

/** What a command may ask of the terminal, beyond its arguments. */
export interface CommandIo {
  /** Everything on standard input, once it ends. */
  readStdin(): Promise<string>;
  /** Whether standard input is a terminal a person can be asked at. */
  readonly interactive: boolean;
  /** Asks on the terminal without echoing what is typed (a password). */
  askHidden(question: string): Promise<string>;
  /**
   * Runs `work` (what follows a committed change: an owner's notice mail) once the answer is
   * printed, as the audit lines are (src/cli/main.ts, `heldAudit`): a failure of it is one line on
   * standard error beginning with `what`, never an answer lost, and the exit code stays the command's.
   */
  afterAnswer(what: string, work: () => Promise<unknown>): void;
}

/** Bad arguments: one line on stderr and exit code 2 (INTERFACE section 9). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Ctrl-C at a prompt: nothing was done; exit code 130, as a shell reports SIGINT. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

export function defineCommand<R extends object>(command: Command<R>): Command<R> {
  return command;
}

export function requiredString(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalString(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The most an `integer` column holds on PostgreSQL (ids, levels, counts of rows): past it the statement fails. */
export const INTEGER_MAX = 2_147_483_647;

/** The most a `bigint` counter (views, experience points) is given here: 15 digits, exact as a number. */
export const COUNTER_MAX = 999_999_999_999_999;

/** `--name`'s whole number, from 0 to `max` (what its column holds). */
export function optionalCount(values: Values, name: string, max = INTEGER_MAX): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value) || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from 0 to ${max}`);
  }
  return Number(value);
}

/** The options of a command that takes a password, and their help. */
export const PASSWORD_OPTIONS = {
  options: { 'password-stdin': { type: 'boolean' }, password: { type: 'string' } } satisfies Options,
  usage: '[--password-stdin | --password P]',
  help: {
    'password-stdin': 'read the password from standard input (its first line); without this or --password, a terminal is asked, without echo',
    password: 'the password itself: other users of this machine can read it in the process list, and the shell keeps it in its history; prefer --password-stdin or the prompt',
  },
} as const;

/**
 * The password from `--password`, `--password-stdin` (the first line of standard input, as
 * `docker login --password-stdin` reads it) or, on a terminal, asked twice without echo.
 */
export async function readPassword(values: Values, io: CommandIo, username: string): Promise<string> {
  const given = optionalString(values, 'password');
  if (given !== undefined && values['password-stdin'] === true) throw new UsageError('use either --password or --password-stdin, not both');
  if (given !== undefined) {
    if (given === '') throw new UsageError('--password is empty');
    return given;
  }
  if (values['password-stdin'] === true) {
    const line = (await io.readStdin()).split(/\r?\n/)[0] ?? '';
    if (line === '') throw new UsageError('--password-stdin: standard input held no password');
    return line;
  }
  if (!io.interactive) throw new UsageError('give the password with --password-stdin (or run in a terminal to be asked for it)');
  const first = await io.askHidden(`Password for ${username}: `);
  if (first === '') throw new UsageError('no password given');
  const again = await io.askHidden('The same password again: ');
  if (again !== first) throw new UsageError('the two passwords differ; nothing was changed');
  return first;
}
