// Node's flags for the service, as `npm start` gives them (package.json's start script): whatever
// else starts the service (the bench, `npm run cluster`) starts it the same way, so its memory
// and speed are what operators get (docs/performance.md, "Node flags in npm start").
import { readFileSync } from 'node:fs';

export function serviceNodeFlags() {
  const start = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
  // The flags of the command that serves: `… && exec node FLAGS dist/main.js`.
  const words = start.split(' ');
  return words.slice(words.lastIndexOf('node') + 1).filter((argument) => argument.startsWith('--'));
}
