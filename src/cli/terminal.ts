/** The command line's standard input: read whole, or asked at a terminal without echo. */
import { Interrupted } from './command.js';
import type { CommandIo } from './command.js';

const ENTER = new Set(['\r', '\n']);
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const ESCAPE = '\u001b';
const BACKSPACE = new Set(['\u007f', '\b']);

export function terminalIo(input: NodeJS.ReadStream = process.stdin, prompt: NodeJS.WriteStream = process.stderr): Omit<CommandIo, 'afterAnswer'> {
  return {
    interactive: input.isTTY === true,
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer));
      return Buffer.concat(chunks).toString('utf8');
    },
    // Raw mode: the terminal echoes nothing and hands over each key; the question goes to
    // standard error, so standard output stays the command's answer.
    askHidden(question) {
      // Echo goes off before the question shows, so nothing typed after it is ever echoed.
      input.setRawMode(true);
      input.setEncoding('utf8');
      input.resume();
      prompt.write(question);
      return new Promise((resolve, reject) => {
        let typed = '';
        const finish = (settle: () => void) => {
          input.off('data', onData);
          input.setRawMode(false);
          input.pause();
          prompt.write('\n');
          settle();
        };
        const onData = (chunk: string) => {
          for (const key of chunk) {
            if (ENTER.has(key)) return finish(() => resolve(typed));
            if (key === CTRL_C) return finish(() => reject(new Interrupted('interrupted')));
            if (key === CTRL_D && typed === '') return finish(() => resolve(''));
            // An escape sequence (an arrow key) arrives as one chunk: none of it is typed text.
            if (key === ESCAPE) break;
            if (BACKSPACE.has(key)) typed = [...typed].slice(0, -1).join('');
            else if (key >= ' ') typed += key;
          }
          return undefined;
        };
        input.on('data', onData);
      });
    },
  };
}
