// Node's flags and environment for the service, as `npm start` gives them (package.json's start script): whatever
// else starts the service (the bench, `npm run cluster`) starts it the same way, so its memory
// and speed are what operators get (docs/performance.md, "Node flags in npm start").
import { readFileSync } from 'node:fs';

/** The words of the command that serves: `… && exec env NAME=VALUE… node FLAGS dist/bundle/main.js`. */
function serveWords() {
  const start = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
  const words = start.split(' ');
  return words.slice(words.lastIndexOf('exec') + 1);
}

export function serviceNodeFlags() {
  const words = serveWords();
  return words.slice(words.indexOf('node') + 1).filter((argument) => argument.startsWith('--'));
}

/** The environment `npm start` sets for the process (glibc's malloc settings), as an object. */
export function serviceProcessEnv() {
  const words = serveWords();
  return Object.fromEntries(words.slice(0, words.indexOf('node')).filter((word) => word.includes('='))
    .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
}

/** The file `npm start` runs: the bundled server (scripts/bundle-service.mjs). */
export function serviceEntry() {
  return serveWords().at(-1);
}
