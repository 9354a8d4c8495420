/** A new browser's sign-in notice advises by what the one who signed in held (attack86, attack87): plain rules and the mail's words. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SIGN_IN_METHOD_WORDS, signInProofOf } from '../../src/core/accounts/security-log.js';
import { LOCALES } from '../../src/core/locales.js';
import { Mailer } from '../../src/core/mail/mailer.js';
import { translator } from '../../src/i18n/catalogs.js';

test('a sign-in\'s method words say what its holder had: the password alone, a second step too, or a passkey alone', () => {
  assert.equal(signInProofOf(SIGN_IN_METHOD_WORDS.password), 'password');
  for (const method of ['password_totp', 'password_recovery_code', 'password_passkey'] as const) assert.equal(signInProofOf(SIGN_IN_METHOD_WORDS[method]), 'second_step', method);
  assert.equal(signInProofOf(SIGN_IN_METHOD_WORDS.passkey), 'passkey');
  assert.equal(signInProofOf(undefined), 'password', 'another kind of event');
});

test('the notice asks to turn two-step verification on only after a password alone, in every language', () => {
  const mailer = new Mailer(true, translator);
  const turnOn = { en: /turn on two-step verification/, 'zh-CN': /开启两步验证/, 'zh-TW': /開啟兩步驟驗證/ } as const;
  const passkey = { en: /one of your passkeys/, 'zh-CN': /通行密钥/, 'zh-TW': /通行金鑰/ } as const;
  for (const locale of LOCALES) {
    const advice = (proof: string) => mailer.render({
      to: 'm@example.test', userId: 1, locale, name: 'noticeSignInSucceeded',
      values: { name: 'm', time: '-', device: '-', address: '-', settingsLink: 'https://site.example/settings/security', proof },
    }).text;
    assert.match(advice('password'), turnOn[locale], locale);
    assert.doesNotMatch(advice('second_step'), turnOn[locale], `${locale}: two-step is on`);
    assert.doesNotMatch(advice('passkey'), turnOn[locale], `${locale}: a passkey alone`);
    assert.match(advice('passkey'), passkey[locale], locale);
    assert.notEqual(advice('second_step'), advice('passkey'), locale);
  }
});
