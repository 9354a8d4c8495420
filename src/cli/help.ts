/** `--help`: the list of commands, and one command's options (output formatting, apart from the commands). */
import type { Command } from './command.js';

const HOW = [
  'Run as `npm run --silent svc -- <command>` (or `node dist/cli/main.js <command>` once built).',
  'Every command takes --json: one JSON object on standard output, nothing else. Bad arguments:',
  'one line on standard error and exit code 2. It reads the server\'s settings (DATABASE_URL, …).',
];

/** Option names as typed, with the value they take: `--username U`. */
function optionWords(command: Command<any>): Array<[string, string]> {
  const placeholder = (name: string): string => {
    const match = new RegExp(`--${name} ([^\\s\\]|]+)`).exec(command.usage);
    return match ? ` ${match[1]}` : '';
  };
  const rows: Array<[string, string]> = Object.keys(command.options).map((name) => [`--${name}${placeholder(name)}`, command.help[name] ?? '']);
  rows.push(['--json', `print one JSON object: ${command.prints}`], ['--help', 'print this help']);
  return rows;
}

/** Text cut into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return line === '' ? lines : [...lines, line];
}

export function commandHelp(command: Command<any>): string {
  const rows = optionWords(command);
  const left = Math.min(28, Math.max(...rows.map(([w]) => w.length)) + 2);
  const lines = [`usage: svc ${command.name} ${command.usage} [--json]`.replace(/ +\[--json\]$/, ' [--json]'), '', ...wrap(command.description, 96), '', 'options:'];
  for (const [words, text] of rows) {
    const wrapped = wrap(text, 96 - left);
    const first = words.length + 2 > left ? [`  ${words}`, ...wrapped.map((l) => `${' '.repeat(left + 2)}${l}`)]
      : [`  ${words.padEnd(left)}${wrapped[0] ?? ''}`, ...wrapped.slice(1).map((l) => `${' '.repeat(left + 2)}${l}`)];
    lines.push(...first);
  }
  return `${lines.join('\n')}\n`;
}

export function commandHelpJson(command: Command<any>) {
  return {
    name: command.name,
    summary: command.summary,
    description: command.description,
    usage: `svc ${command.name} ${command.usage} [--json]`.replace(/ +\[--json\]$/, ' [--json]'),
    options: Object.fromEntries(optionWords(command)),
    prints: command.prints,
  };
}

export function overview(commands: readonly Command<any>[]): string {
  const left = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    'usage: svc <command> [options] [--json]', '', ...HOW, '', 'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(left)}${c.summary}`),
    '', 'svc <command> --help shows a command\'s options.',
  ].join('\n') + '\n';
}

export function overviewJson(commands: readonly Command<any>[]) {
  return { commands: commands.map((c) => ({ name: c.name, summary: c.summary, usage: `svc ${c.name} ${c.usage}`.trimEnd() })) };
}
