/** What every command of the command line is: options, a run, and how to show its result. */
import type { ParseArgsConfig } from 'node:util';
import type { Deps } from '../deps.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command<R extends object = object> {
  /** "noun verb" or a single word, as typed. */
  readonly name: string;
  readonly usage: string;
  readonly options: Options;
  run(deps: Deps, values: Values): Promise<R>;
  /** The result for a person; `--json` prints `R` itself. */
  human(result: R): string;
}

/** Bad arguments: one line on stderr and exit code 2 (INTERFACE section 9). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
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

export function optionalCount(values: Values, name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) {
    throw new UsageError(`--${name} must be a whole number of 0 or more`);
  }
  return Number(value);
}
