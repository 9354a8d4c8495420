/**
 * attack82: `svc client rotate-secret` as the owner of the app hears of it, and as the operator
 * sees it when the secret cannot reach standard output. Run as processes against each database.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { hashSecret } from '../../src/core/credentials/formats.js';
import type { Stores } from '../../src/core/stores.js';
import { type DatabaseHandle, openDatabase } from '../../src/storage/database.js';
import { createStores } from '../../src/storage/stores.js';
import { svc } from '../support/cli.js';
import { compiled } from '../support/processes.js';
import { forEachDatabase } from '../support/databases.js';

const name = (prefix: string) => `${prefix}${randomBytes(3).toString('hex')}`;
/** Mail on: a notice is queued in the outbox; nothing delivers it. */
const MAIL = { SMTP_URL: 'smtp://127.0.0.1:9' };

forEachDatabase('attack82: an operator\'s secret rotation', (database) => {
  let handle: DatabaseHandle;
  let stores: Stores;
  before(() => {
    assert.equal(svc(database.url, ['migrate', '--json']).code, 0);
    handle = openDatabase(database.target);
    stores = createStores(handle.db, handle.queries);
  });
  after(() => handle.close());

  /** An account with a verified address in `locale` and a confidential app it owns. */
  async function ownerWithApp(prefix: string, locale?: 'zh-CN' | 'zh-TW'): Promise<{ userId: number; clientId: string; secret: string }> {
    const owner = name(prefix);
    const user = svc(database.url, ['user', 'create', '--username', owner, '--password', 'long enough pw', '--json']).json;
    const address = `${owner}@example.test`;
    await stores.memberEmails.set(user.id, address, 'en', Date.now());
    assert.ok(await stores.memberEmails.markVerified(user.id, address, Date.now()));
    if (locale) await handle.db.updateTable('users').set({ language: locale }).where('id', '=', user.id).execute();
    const client = svc(database.url, ['client', 'create', '--name', 'Owned App', '--type', 'confidential', '--redirect-uri', 'https://owned.example/cb', '--owner', owner, '--json']).json;
    return { userId: user.id, clientId: client.client_id, secret: client.client_secret };
  }
  const noticesTo = (userId: number) => handle.db.selectFrom('mail_outbox').select(['kind', 'subject', 'body_text']).where('user_id', '=', userId).execute();

  test('the owner\'s notice of a rotation by the site\'s staff says so, tells them the app needs a secret they hold, and does not send them to change their password', async () => {
    for (const [locale, staff, password, another] of [
      [undefined, /site's staff made a new client secret/, /change your password at once/, /make another/],
      ['zh-CN', /网站管理人员/, /请立即修改密码/, /再轮换一次密钥/],
      ['zh-TW', /網站管理人員/, /請立即變更密碼/, /再輪替一次密鑰/],
    ] as const) {
      const { userId, clientId } = await ownerWithApp('staffmail', locale);
      const rotated = svc(database.url, ['client', 'rotate-secret', '--client-id', clientId, '--json'], MAIL);
      assert.equal(rotated.code, 0, rotated.stderr);
      const notices = await noticesTo(userId);
      assert.equal(notices.length, 1, locale);
      const [notice] = notices;
      assert.match(notice!.subject, /Owned App/, locale);
      assert.match(notice!.body_text, staff, `${locale}: ${notice!.body_text}`);
      assert.doesNotMatch(notice!.body_text, password, `${locale}: a staff action is no sign that the account was taken`);
      assert.match(notice!.body_text, another, `${locale}: the way to a secret the owner holds`);
      assert.ok(notice!.body_text.includes(`/settings/developers/${clientId}`), locale);
      assert.ok(!notice!.body_text.includes(rotated.json.client_secret), 'never the secret');
    }
  });

  test('a rotation whose answer cannot be written to standard output says so in one line, exits 1, and still queues the owner\'s notice', async () => {
    compiled();
    const { userId, clientId, secret } = await ownerWithApp('full');
    const stdout = openSync('/dev/full', 'w');
    let run;
    try {
      run = spawnSync(process.execPath, ['dist/cli/main.js', 'client', 'rotate-secret', '--client-id', clientId, '--json'], {
        encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, BASE_URL: 'http://localhost:3000', ...MAIL }, stdio: ['pipe', stdout, 'pipe'],
      });
    } finally {
      closeSync(stdout);
    }
    assert.equal(run.status, 1, run.stderr);
    const lines = run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0]!, /^svc: the answer could not be written to standard output: .*ENOSPC.*a secret it printed is lost/);
    assert.doesNotMatch(run.stderr, /node:events|Unhandled 'error' event/);
    // The rotation was made: the app's secret is no longer the one its owner held, and the owner is told.
    assert.notEqual((await stores.clients.findById(clientId))?.secretHash, hashSecret(secret));
    assert.deepEqual((await noticesTo(userId)).map((n) => n.kind), ['noticeClientSecretRotatedByStaff']);
    // Its audit lines were written, after the line that says the answer is lost.
    assert.ok(run.stderr.includes('"audit":"client.secret_rotated"'), run.stderr);
  });
});
