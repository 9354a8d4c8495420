/**
 * How a server's refusal is read (`readReply`, docs/operations.md "Mail"): by its enhanced status
 * code where it gives one (RFC 3463 section 3), else by its basic code and the step it answered
 * (RFC 5321 section 4.2); never by its words. Each rule: whether the mail is given up at once,
 * whether the member's address is what was refused, and whether that waits for proof (`unproven`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ReplyReading, readReply } from '../../src/core/mail/outbox.js';
import type { SmtpReply } from '../../src/core/mail/ports.js';

const GIVE_UP_ADDRESS: ReplyReading = { giveUp: true, addressRefused: true };
const RETRY_ADDRESS: ReplyReading = { giveUp: false, addressRefused: true };
const GIVE_UP_SITE: ReplyReading = { giveUp: true, addressRefused: false };
const RETRY_SITE: ReplyReading = { giveUp: false, addressRefused: false };
const GIVE_UP_UNPROVEN: ReplyReading = { giveUp: true, addressRefused: true, unproven: true };
const RETRY_UNPROVEN: ReplyReading = { giveUp: false, addressRefused: true, unproven: true };

function reads(cases: ReadonlyArray<readonly [SmtpReply['step'], number, string | null]>, expected: ReplyReading): void {
  for (const [step, code, enhanced] of cases) assert.deepEqual(readReply({ step, code, enhanced }), expected, `${step} ${code} ${enhanced ?? ''}`);
}

test('x.1.y (a bad mailbox, address or domain) is the member\'s address: a 5.1.y is given up at once, a 4.1.y tried again', () => {
  reads([['recipient', 550, '5.1.1'], ['recipient', 553, '5.1.3'], ['recipient', 550, '5.1.2'], ['data', 550, '5.1.10']], GIVE_UP_ADDRESS);
  reads([['recipient', 450, '4.1.1']], RETRY_ADDRESS);
});

test('x.1.0, "other address status", names no side (the registry: "something about the address specified in the message"; Postfix answers 550 5.1.0 for an unlisted MAIL_FROM at RCPT): the address\'s only once proven, as a bare code', () => {
  reads([['recipient', 550, '5.1.0'], ['recipient', 553, '5.1.0'], ['data', 550, '5.1.0']], GIVE_UP_UNPROVEN);
  reads([['recipient', 450, '4.1.0']], RETRY_UNPROVEN);
});

test('a code of the site\'s sender or its policy (x.7.y: 5.7.1, 5.7.8, 5.7.26, a relay\'s own 5.7.60; x.1.7, x.1.8) is the site\'s at whichever step it comes, RCPT, DATA or MAIL FROM alike: tried again, never the member\'s address', () => {
  reads([
    ['recipient', 554, '5.7.1'], ['data', 550, '5.7.1'], ['site', 550, '5.7.1'], ['data', 550, '5.7.60'], ['recipient', 550, '5.7.60'], ['site', 550, '5.7.60'],
    ['data', 550, '5.7.26'], ['data', 550, '5.7.23'], ['data', 554, '5.7.0'], ['recipient', 535, '5.7.8'], ['recipient', 451, '4.7.1'], ['data', 451, '4.7.1'],
    ['recipient', 553, '5.1.8'], ['recipient', 550, '5.1.7'], ['recipient', 450, '4.1.8'], ['data', 553, '5.1.8'], ['site', 553, '5.1.7'],
  ], RETRY_SITE);
});

test('x.3.y the mail system and x.5.y the protocol are the site\'s relay refusing the site: tried again, never the member\'s address', () => {
  reads([['recipient', 550, '5.3.5'], ['recipient', 421, '4.3.2'], ['recipient', 501, '5.5.4'], ['recipient', 452, '4.5.3']], RETRY_SITE);
});

test('a message too large (552 at DATA, 5.3.4, 5.2.3) or refused for its content (5.6.y) fails again on retry: given up at once, the site\'s', () => {
  reads([['data', 552, null], ['data', 552, '5.3.4'], ['data', 554, '5.3.4'], ['recipient', 552, '5.2.3'], ['data', 554, '5.6.0']], GIVE_UP_SITE);
});

test('x.2.y is the member\'s mailbox, disabled (5.2.1) given up at once; full (x.2.2, 554 5.2.2 too: a persistent transient condition, and a relay\'s quota of the site is sent so) is never given up at once, and is the address\'s only once proven', () => {
  reads([['recipient', 450, '4.2.0']], RETRY_ADDRESS);
  reads([['recipient', 550, '5.2.1']], GIVE_UP_ADDRESS);
  reads([['data', 552, '5.2.2'], ['data', 554, '5.2.2'], ['recipient', 552, '5.2.2'], ['recipient', 452, '4.2.2']], RETRY_UNPROVEN);
});

test('without an enhanced code (or with an x.0.y or x.4.y), the basic code reads to RCPT as the recipient\'s, unproven: a 5yz given up at once, 554 too, save 552, tried again as a 452; a 4yz tried again', () => {
  reads([['recipient', 550, null], ['recipient', 554, null], ['recipient', 551, null], ['recipient', 550, '5.4.4'], ['recipient', 550, '5.0.0']], GIVE_UP_UNPROVEN);
  reads([['recipient', 552, null], ['recipient', 451, null], ['recipient', 450, '4.4.1']], RETRY_UNPROVEN);
});

test('without an enhanced code (or with an x.4.y), the basic code reads to DATA as the message\'s or the site\'s, the recipient accepted at RCPT: a 5yz (a bare 554 too) given up at once, a 4yz tried again, never the member\'s address', () => {
  reads([['data', 554, null], ['data', 550, null], ['data', 552, null], ['data', 554, '5.4.0']], GIVE_UP_SITE);
  reads([['data', 451, null], ['data', 450, '4.4.1']], RETRY_SITE);
});

test('an x.1.y or x.2.y whose detail no registry lists (RFC 5248: a relay\'s own, as Exchange Online\'s 554 5.2.252 SendAsDenied for a MAIL_FROM it will not send as, 5.1.90 for the site\'s daily limit) is the site\'s at any step: tried again, never the member\'s address', () => {
  reads([['data', 554, '5.2.252'], ['data', 550, '5.1.90'], ['data', 554, '5.2.5'], ['data', 452, '4.2.121'], ['recipient', 550, '5.1.90'], ['recipient', 554, '5.2.252']], RETRY_SITE);
  // The registered ones keep their meaning: x.1.10, the recipient's domain has a null MX (RFC 7505 section 4.2).
  reads([['data', 550, '5.1.10'], ['data', 554, '5.2.4']], GIVE_UP_ADDRESS);
});

test('an enhanced code whose class is not the basic code\'s first digit (RFC 3463 section 2: 4.x.x transient, 5.x.x permanent) is ambiguous, so read as for now: tried again, whose as its subject says, never given up at once', () => {
  reads([['recipient', 554, '4.7.1'], ['data', 554, '4.7.1'], ['recipient', 550, '4.3.0']], RETRY_SITE);
  reads([['recipient', 451, '5.1.1'], ['recipient', 550, '4.1.1'], ['data', 451, '5.1.1']], RETRY_ADDRESS);
  reads([['recipient', 550, '4.2.2'], ['data', 550, '4.2.2'], ['recipient', 554, '4.0.0'], ['recipient', 550, '2.0.0']], RETRY_UNPROVEN);
});

test('a refusal of any other step (sign-in, MAIL FROM) is the site\'s, whatever its codes: tried again', () => {
  reads([['site', 535, '5.7.8'], ['site', 553, '5.1.1'], ['site', 550, null], ['site', 552, '5.3.4']], RETRY_SITE);
});

test('by the basic code, a reply about the syntax (x0z: 500 to 504), the connection (x2z: 421) or the sign-in (x3z: 530, 535) is the site\'s relay refusing the site: tried again, never the member\'s address', () => {
  reads([
    ['recipient', 530, null], ['recipient', 535, null], ['data', 530, null], ['recipient', 503, null], ['recipient', 500, null], ['data', 502, null],
    ['recipient', 421, null], ['data', 421, null], ['recipient', 530, '5.0.0'], ['recipient', 421, '4.4.2'],
  ], RETRY_SITE);
});
