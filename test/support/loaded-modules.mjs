// Preloaded into a server process (`node --import ./test/support/loaded-modules.mjs dist/bundle/main.js`)
// to list every module it loads into the file LOADED_MODULES_FILE: ES modules as the loader
// resolves them (loaded-modules-hook.mjs), CommonJS ones from require's cache at exit.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
register('./loaded-modules-hook.mjs', import.meta.url, { data: { file } });
process.on('exit', () => appendFileSync(file, `${Object.keys(createRequire(import.meta.url).cache).join('\n')}\n`));
