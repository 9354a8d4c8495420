/**
 * `mailboxKey` (T65): the mailbox an address reaches, by which the per-address limit of
 * verification mails and a "Not you?" pass count. A domain is read by IDNA (UTS #46 ToASCII): a
 * Unicode domain and its punycode form are one domain in DNS, so one mailbox.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mailboxKey } from '../../src/core/accounts/email.js';

test('mailboxKey reads a Unicode domain and its punycode form as one mailbox', () => {
  const key = mailboxKey('name@xn--fsqu00a.com');
  assert.equal(key, 'name@xn--fsqu00a.com');
  for (const spelling of ['name@例子.com', 'Name@例子.COM', 'name+tag@例子.com.', 'name@例子\u3002com', 'name@XN--FSQU00A.com']) {
    assert.equal(mailboxKey(spelling), key, spelling);
  }
  assert.equal(mailboxKey('name@bücher.example'), mailboxKey('name@xn--bcher-kva.example'));
});

test('mailboxKey keeps the domain as read when IDNA refuses it', () => {
  // `xn--zz` is no valid punycode: ToASCII fails, and the domain is counted as typed, not as ''.
  assert.equal(mailboxKey('name@xn--zz.com'), 'name@xn--zz.com');
  assert.equal(mailboxKey('name@-x.example'), 'name@-x.example');
});

test('mailboxKey still reads Gmail as one mailbox once its domain passes IDNA', () => {
  assert.equal(mailboxKey('n.a.me+x@ＧＯＯＧＬＥＭＡＩＬ.com'), 'name@gmail.com');
});

test('mailboxKey reads a domain by IDNA only where the mail goes to that domain: a label IDNA first maps is kept as read', () => {
  // The transport punycodes each label as it stands: these mails go to other domains than example.com.
  for (const domain of ['ex%61mple.com', 'exa\ufe0fmple.com', 'exa\u034fmple.com', 'exa\u{e0100}mple.com', '0x7f.1']) {
    assert.equal(mailboxKey(`name@${domain}`), `name@${domain}`, domain);
  }
  assert.notEqual(mailboxKey('name@ꮳꮤ.com'), mailboxKey('name@xn--nbe3a.com'), 'a Cherokee label IDNA folds to its capitals');
});
