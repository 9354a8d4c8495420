/** The translator's own values: the site's name, which every message naming `{site}` gets from it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { translator } from '../../src/i18n/catalogs.js';

/** A name an operator may set that ICU would read as syntax: an apostrophe, braces, a plural's `#`, a tag. */
const NAME = "Bob's {Café} #1 <b>";

test('a message naming {site} gets the deployment\'s name from the translator, with ICU syntax in the name shown literally', () => {
  assert.equal(translator('en', NAME).text('logout.confirmHeading'), `Sign out of ${NAME}?`);
  assert.equal(translator('zh-CN', NAME).text('logout.anAppAsks'), `有一个应用请求让你退出${NAME}的登录。`);
  const parts = translator('en', NAME).parts<{ bold: string }>('logout.appAsks', { app: 'Notes', b: (chunks) => ({ bold: chunks.join('') }) });
  assert.deepEqual(parts, [{ bold: 'Notes' }, ` asked to sign you out of ${NAME} as well.`], 'markup around the name, the name a string still to escape');
});

test('a site its operator did not name is named in {site} as its language\'s catalog names it', () => {
  assert.equal(translator('en').text('logout.confirmHeading'), 'Sign out of Community?');
  assert.equal(translator('zh-TW').text('logout.confirmHeading'), '要登出社群嗎？');
});
