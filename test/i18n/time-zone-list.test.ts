/**
 * What the profile page's time zones leave behind (issue 35 item 5: peak RSS): an
 * `Intl.DateTimeFormat` holds about 25 KB of ICU memory outside the JavaScript heap, so one kept
 * per listed zone (418) held 10 MB for as long as the server ran, and one per spelling of a zone
 * sent in the form up to 25 MB.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type TestApp, startTestApp } from '../support/app.js';
import { temporarySqliteDatabase } from '../support/databases.js';
import { signedInMember } from '../site/visitor.js';
import { isTimeZone } from '../../src/core/site-time.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

// Every formatter made from here on, held weakly: one still there after a full collection is one the server keeps.
const made: WeakRef<Intl.DateTimeFormat>[] = [];
Intl.DateTimeFormat = new Proxy(Intl.DateTimeFormat, {
  construct(target, args, newTarget) {
    const format = Reflect.construct(target, args, newTarget) as Intl.DateTimeFormat;
    made.push(new WeakRef(format));
    return format;
  },
});

let t: TestApp;
before(async () => { t = await startTestApp(temporarySqliteDatabase()); });
after(async () => t.close());

test('the time-zone list keeps no formatter per zone once shown, in any language', async () => {
  const { visitor } = await signedInMember(t, 'zonelister', 'correct horse battery staple');
  for (const language of ['zh-CN', 'en', 'zh-TW']) {
    assert.equal((await visitor.post('/settings/profile', { language })).status, 303);
    const page = await visitor.get('/settings/profile');
    assert.equal(page.status, 200);
    assert.ok(page.text.split('<option value="').length > 400, `${language}: every zone listed`);
  }
  collectGarbage();
  const kept = made.filter((format) => format.deref() !== undefined).length;
  assert.ok(kept < 20, `${kept} of the ${made.length} formatters made are still held`);
});

test('a flood of spellings of a zone keeps at most 64 formatters', async () => {
  const first = made.length;
  // 1,000 of the 4,096 spellings of asia/shanghai, each a zone the runtime takes (ICU reads names in any case).
  for (let i = 0; i < 1000; i++) {
    const spelling = `${[...'asia'].map((letter, at) => ((i >> at) & 1 ? letter.toUpperCase() : letter)).join('')}/${[...'shanghai'].map((letter, at) => ((i >> (at + 4)) & 1 ? letter.toUpperCase() : letter)).join('')}`;
    assert.ok(isTimeZone(spelling), spelling);
  }
  // A WeakRef holds its target until the task that made it ends.
  await new Promise(setImmediate);
  collectGarbage();
  const kept = made.slice(first).filter((format) => format.deref() !== undefined).length;
  assert.ok(kept <= 64, `${kept} of the ${made.length - first} formatters made are still held`);
});
