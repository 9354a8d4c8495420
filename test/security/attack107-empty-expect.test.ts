/**
 * attack107 F3: an Expect field with no member (`Expect:` empty, `Expect: ,`) asks for nothing
 * (RFC 9110 10.1.1, `Expect = #expectation`; 5.6.1.2: a recipient accepts empty list elements),
 * yet Node hands it to 'checkExpectation', and it was refused 417 with its connection closed,
 * while `100-continue, ,` was met: the rule the Expect check states (`CONTINUE_MEMBER`) counts
 * empty members as nothing asked. It is served as a request without Expect is.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestApp, startTestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { answersIn, exchange } from '../support/raw-socket.js';

forEachDatabase('attack107 F3: an Expect field without a member', (database) => {
  let t: TestApp;
  before(async () => { t = await startTestApp(database); });
  after(() => t.close());

  test('Expect with no member is served as a request without it; Expect: foo is still 417', async () => {
    const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
    const body = 'grant_type=nothing';
    const request = (expect: string) => `POST /api/oauth/token HTTP/1.1\r\n${host}${expect}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const [plain] = answersIn((await exchange(t.baseUrl, request(''), { quietMs: 700 })).text);
    assert.equal(plain!.status, 400);
    for (const expect of ['Expect:\r\n', 'Expect: ,\r\n', 'Expect: \t, ,\r\n']) {
      const { text, closed } = await exchange(t.baseUrl, request(expect), { quietMs: 700 });
      const [answer] = answersIn(text);
      assert.equal(answer!.status, plain!.status, JSON.stringify(expect));
      assert.equal(answer!.body, plain!.body, JSON.stringify(expect));
      assert.equal(closed, false, JSON.stringify(expect));
    }
    const [refused] = answersIn((await exchange(t.baseUrl, request('Expect: foo\r\n'), { quietMs: 700 })).text);
    assert.equal(refused!.status, 417);
  });
});
