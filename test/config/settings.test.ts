import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { SettingsError, loadSettings, otlpTraces } from '../../src/config/settings.js';

test('defaults follow INTERFACE section 8', () => {
  const s = loadSettings({});
  assert.equal(s.port, 3000);
  assert.equal(s.host, '127.0.0.1');
  assert.equal(s.baseUrl, 'http://localhost:3000');
  assert.deepEqual(s.database, { kind: 'sqlite', path: './data/svc.sqlite' });
  assert.equal(s.redisUrl, undefined);
  assert.equal(s.demo, true);
  assert.equal(s.rateLimitPerMinute, 60);
  assert.equal(s.signUpsPerHour, 50, 'not INTERFACE\'s: enough for a class behind one address (README)');
  assert.equal(s.accessTokenTtlSeconds, 3600);
  assert.equal(s.codeTtlSeconds, 300);
  assert.ok(Object.isFrozen(s));
});

test('the token, PAR and registration endpoints\' limits default to strict failures, generous pushes and 20 registrations an hour (README)', () => {
  const s = loadSettings({});
  assert.deepEqual(
    [s.clientAuthFailuresPerAddress, s.clientAuthClientsPerAddress, s.clientAuthFailuresPerClient, s.pushesPerMinutePerClient, s.pushesPerMinutePerAddress],
    [20, 20, 100, 600, 300],
  );
  assert.throws(() => loadSettings({ PAR_PER_MINUTE_PER_ADDRESS: '0' }), /PAR_PER_MINUTE_PER_ADDRESS/);
  assert.throws(() => loadSettings({ CLIENT_AUTH_CLIENTS_PER_ADDRESS: '0' }), /CLIENT_AUTH_CLIENTS_PER_ADDRESS/);
  assert.equal(s.registrationsPerHourPerAddress, 20, 'INTERFACE section 13');
  assert.equal(loadSettings({ REGISTRATIONS_PER_HOUR_PER_ADDRESS: '500' }).registrationsPerHourPerAddress, 500);
  assert.throws(() => loadSettings({ REGISTRATIONS_PER_HOUR_PER_ADDRESS: '0' }), /REGISTRATIONS_PER_HOUR_PER_ADDRESS/);
});

test('a rotated client secret is kept working no time by default (INTERFACE section 2); PREVIOUS_CLIENT_SECRET_HOURS keeps it at most a week', () => {
  assert.equal(loadSettings({}).previousClientSecretHours, 0);
  assert.equal(loadSettings({ PREVIOUS_CLIENT_SECRET_HOURS: '168' }).previousClientSecretHours, 168);
  for (const PREVIOUS_CLIENT_SECRET_HOURS of ['169', '-1', '1.5', 'week']) {
    assert.throws(() => loadSettings({ PREVIOUS_CLIENT_SECRET_HOURS }), /invalid setting PREVIOUS_CLIENT_SECRET_HOURS=.*from 0 to 168$/, PREVIOUS_CLIENT_SECRET_HOURS);
  }
});

test('BASE_URL follows PORT and loses a trailing slash; DEMO defaults to 0 on PostgreSQL', () => {
  assert.equal(loadSettings({ PORT: '8080' }).baseUrl, 'http://localhost:8080');
  assert.equal(loadSettings({ BASE_URL: 'https://id.example/' }).baseUrl, 'https://id.example');
  const pg = loadSettings({ DATABASE_URL: 'postgres://u@h/db' });
  assert.deepEqual(pg.database, { kind: 'postgres', url: 'postgres://u@h/db' });
  assert.equal(pg.demo, false);
  assert.deepEqual(loadSettings({ DATABASE_URL: 'sqlite:/tmp/x.db' }).database, { kind: 'sqlite', path: '/tmp/x.db' });
});

test('the demo needs a BASE_URL its app can be registered under (https, or http on a loopback host): off by default elsewhere, refused if asked for', () => {
  for (const BASE_URL of ['http://devbox:3000', 'http://192.168.1.10:3000', 'http://[fd00::1]:3000']) {
    assert.equal(loadSettings({ BASE_URL }).demo, false, `${BASE_URL}: an existing install there still starts`);
    assert.throws(() => loadSettings({ BASE_URL, DEMO: '1' }), (e: unknown) => e instanceof SettingsError && /^invalid setting DEMO=1 with BASE_URL=.*leave DEMO unset/.test(e.message) && !e.message.includes('\n'), BASE_URL);
  }
  for (const BASE_URL of ['https://id.example', 'http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
    assert.equal(loadSettings({ BASE_URL }).demo, true, BASE_URL);
  }
});

test('a bad setting stops the start with one line naming it and what it accepts', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /^invalid setting PORT="eighty": accepts an integer from 0 to 65535$/],
    [{ PORT: '70000' }, /PORT/],
    [{ BASE_URL: 'ftp://x' }, /^invalid setting BASE_URL=.*http/],
    [{ BASE_URL: 'https://x/?q=1' }, /BASE_URL/],
    [{ DATABASE_URL: 'mysql://x' }, /^invalid setting DATABASE_URL=.*sqlite:PATH or postgres/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ DEMO: 'yes' }, /^invalid setting DEMO="yes": accepts 1 or 0 \(or true, false\)$/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
    [{ SIGN_UPS_PER_HOUR: '0' }, /SIGN_UPS_PER_HOUR/],
    [{ ACCESS_TOKEN_TTL: '-5' }, /ACCESS_TOKEN_TTL/],
    [{ CODE_TTL: '1.5' }, /CODE_TTL/],
    [{ KEYS_SECRET: 'short' }, /KEYS_SECRET.*32/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ TRUST_PROXY: 'true' }, /^invalid setting TRUST_PROXY="true": accepts the number of proxies/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '0.0.0.0/0' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '::/0' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.1,proxy.example' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '99' }, /TRUST_PROXY/],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => loadSettings(env), (e: unknown) => e instanceof SettingsError && message.test(e.message) && !e.message.includes('\n'), JSON.stringify(env));
  }
});

test('PORT=0 needs a BASE_URL: the issuer cannot name a port the system picks', () => {
  assert.throws(() => loadSettings({ PORT: '0' }),
    (e: unknown) => e instanceof SettingsError && /^invalid setting PORT="0": accepts a port from 1 to 65535 without BASE_URL/.test(e.message));
  assert.equal(loadSettings({ PORT: '0', BASE_URL: 'https://id.example' }).baseUrl, 'https://id.example');
});

test('METRICS_PORT equal to PORT is a bad setting, not a start that fails once the public server listens', () => {
  assert.throws(() => loadSettings({ PORT: '3000', METRICS_PORT: '3000' }),
    (e: unknown) => e instanceof SettingsError && e.message === 'invalid setting METRICS_PORT="3000": accepts a port other than PORT (3000), where the public server listens');
  assert.throws(() => loadSettings({ METRICS_PORT: '3000' }), SettingsError, 'PORT\'s default counts too');
  assert.equal(loadSettings({ PORT: '3000', METRICS_PORT: '9464' }).metricsPort, 9464);
});

test('HOST is an IP address or a host name: a value that is neither (a typo, a mistyped address) is a bad setting', () => {
  for (const HOST of ['127.0.0.1', '0.0.0.0', '::', '::1', 'fd00::5', 'localhost', 'idp-1.internal', 'host.example.', '10.0.0.5']) {
    assert.equal(loadSettings({ HOST }).host, HOST, HOST);
  }
  for (const HOST of ['not an ip', '999.1.1.1', '10.0.0', '[::1]', '127.0.0.1:3000', 'http://localhost', '-host', 'a..b', `${'a'.repeat(64)}.example`]) {
    assert.throws(() => loadSettings({ HOST }),
      (e: unknown) => e instanceof SettingsError && e.message === `invalid setting HOST=${JSON.stringify(HOST)}: accepts an IP address of this machine (127.0.0.1, 0.0.0.0, ::) or a host name`, HOST);
  }
});

test('a refused setting that holds a URL (REDIS_URL, DATABASE_URL, BASE_URL, SMTP_URL, the OTLP endpoints, any other) is named without its password, even one not percent-encoded, in its query, or in a URL the parsers refuse or mistyped', () => {
  const cases: Array<Record<string, string>> = [
    { REDIS_URL: 'redis://:pa/ss@w0rd#x@127.0.0.1:6379' },
    { REDIS_URL: 'redis://svc:pa@ssw0rd@127.0.0.1:6379/db2' },
    { DATABASE_URL: 'postgress://svc:pa@ssw0rd@db.internal/svc' },
    // ioredis and node-postgres take a password from the query too.
    { REDIS_URL: 'redis://127.0.0.1:6379/db2?password=pa/ssw0rd' },
    { REDIS_URL: 'sentinel://127.0.0.1:26379/mymaster?sentinelPassword=pa/ssw0rd' },
    { DATABASE_URL: 'postgress://db.internal/svc?password=pa/ssw0rd' },
    // Not quite URLs (attack137): a leading space or newline, the scheme's slashes missing.
    { DATABASE_URL: ' postgres://svc:pa@ssw0rd@db.internal/svc' },
    { DATABASE_URL: 'postgres:svc:pa@ssw0rd@db.internal/svc' },
    { REDIS_URL: 'redis:/svc:pa@ssw0rd@127.0.0.1:6379' },
    { REDIS_URL: '\nredis://svc:pa@ssw0rd@127.0.0.1:6379/99x' },
    { BASE_URL: 'http://svc:pa@ssw0rd@db.internal/' },
    { BASE_URL: 'http://svc:pa@ssw0rd@db.internal:99999/' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://svc:pa@ssw0rd@db.internal:4318/?a=1' },
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://svc:pa@ssw0rd@db.internal:4317' },
    // A URL pasted into the wrong setting.
    { WORKERS: 'postgres://svc:pa@ssw0rd@db.internal/svc' },
    { CLIENT_METADATA_HOSTS: 'redis://:pa/ssw0rd@127.0.0.1:6379' },
    // Mistyped (attack138): in quotes as an env file keeps them, a colon or the scheme missing, a
    // stray character before it, the user and password percent-encoded, a `#` in the password.
    { DATABASE_URL: '"postgres://svc:pa@ssw0rd@db.internal:5432/svc"' },
    { REDIS_URL: 'redis//:pa/ssw0rd@127.0.0.1:6379' },
    { DATABASE_URL: '//svc:pa@ssw0rd@db.internal/svc' },
    { DATABASE_URL: 'svc:pa@ssw0rd@db.internal/svc' },
    { BASE_URL: '=http://svc:pa@ssw0rd@db.internal/' },
    { REDIS_URL: '\u200bredis://svc:pa@ssw0rd@127.0.0.1:6379' },
    { REDIS_URL: 'svc%3Apa%2Fssw0rd%40127.0.0.1:6379' },
    { SMTP_URL: 'smtp://svc:pa#ssw0rd@db.internal:587' },
    { SMTP_URL: 'smtp://svc:pa/ssw0rd@db.internal:587' },
    // An `@` or `:` that only looks like one, and a query where no scheme comes first (attack139).
    { REDIS_URL: 'redis://:pa/ssw0rd\uff20127.0.0.1:6379' },
    { BASE_URL: 'https://svc:pa/ssw0rd\ufe6bdb.internal/' },
    { DATABASE_URL: 'svc\uff1apa/ssw0rd@db.internal/svc' },
    { REDIS_URL: '127.0.0.1:6379?password=pa/ssw0rd' },
    { SMTP_URL: 'db.internal:587?password=pa/ssw0rd' },
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'db.internal:4317#api-key=pa/ssw0rd' },
    // A query begun without its `?`.
    { REDIS_URL: 'redis://127.0.0.1:6379/0&password=pa/ssw0rd' },
    { DATABASE_URL: 'postgress://db.internal/svc;password=pa/ssw0rd' },
  ];
  for (const env of cases) {
    assert.throws(() => { loadSettings(env); otlpTraces(env); }, (e: unknown) => e instanceof SettingsError && /^invalid setting [A-Z_]+=/.test(e.message) && !/pa[/@]ss|w0rd/.test(e.message) && /db\.internal|127\.0\.0\.1/.test(e.message), JSON.stringify(env));
  }
});

test('MAIL_FROM holds no control or invisible character, in its name or its address: it becomes a header, and an address with a zero-width space reads as another\'s', () => {
  for (const MAIL_FROM of ['no-reply@exa\u200bmple.com', 'Ops\u202e <ops@example.com>', 'ops@example.com\x7f', 'O\x00ps <ops@example.com>', 'Ops\tTeam <ops@example.com>']) {
    assert.throws(() => loadSettings({ MAIL_FROM }), (e: unknown) => e instanceof SettingsError && /^invalid setting MAIL_FROM=/.test(e.message), JSON.stringify(MAIL_FROM));
  }
  for (const MAIL_FROM of ['社区 <no-reply@example.com>', 'no-reply@例子.测试', '"Ops, Team" <ops@example.com>']) {
    assert.equal(loadSettings({ MAIL_FROM }).mailFrom, MAIL_FROM);
  }
});

test('a refused setting\'s value longer than 200 characters is quoted up to there, and its length said: the line stays a line', () => {
  const METRICS_PORT = '9'.repeat(100_000);
  assert.throws(() => loadSettings({ METRICS_PORT }), (e: unknown) => e instanceof SettingsError
    && e.message.startsWith(`invalid setting METRICS_PORT="${'9'.repeat(200)}"… (100000 characters): accepts `) && e.message.length < 400);
  // Counted in characters, as shown: a cut never halves an emoji.
  assert.throws(() => loadSettings({ WORKERS: '🙂'.repeat(201) }), (e: unknown) => e instanceof SettingsError
    && e.message.startsWith(`invalid setting WORKERS="${'🙂'.repeat(200)}"… (201 characters): `));
  assert.throws(() => loadSettings({ WORKERS: '🙂'.repeat(200) }), (e: unknown) => e instanceof SettingsError
    && e.message.startsWith(`invalid setting WORKERS="${'🙂'.repeat(200)}": `));
  // As long as Linux lets one value be (128 KiB), of the characters the password hiding looks for.
  assert.throws(() => loadSettings({ WORKERS: `:${'@'.repeat(131_000)}` }), (e: unknown) => e instanceof SettingsError
    && e.message.startsWith('invalid setting WORKERS="…@"'));
});

test('REDIS_URL\'s path is a database number, or nothing', () => {
  for (const REDIS_URL of ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/', 'redis://h:6379/2', 'rediss://:pw@h:6380/15']) {
    assert.equal(loadSettings({ REDIS_URL }).redisUrl, REDIS_URL, REDIS_URL);
  }
  for (const REDIS_URL of ['redis://h:6379/two', 'redis://h:6379/2/3', 'redis://h:6379/-1']) {
    assert.throws(() => loadSettings({ REDIS_URL }), (e: unknown) => e instanceof SettingsError && /^invalid setting REDIS_URL=.*database number after the port/.test(e.message), REDIS_URL);
  }
});

test('a Sentinel REDIS_URL (sentinel://, redis-sentinel://) is refused with one line saying Sentinel is not asked and what to set, its password not shown', () => {
  for (const REDIS_URL of ['sentinel://:secret-pw@10.0.0.5:26379/mymaster', 'redis-sentinel://10.0.0.5:26379,10.0.0.6:26379', 'SENTINELS://10.0.0.5:26379']) {
    const shown = REDIS_URL.replace(':secret-pw@', '…@');
    assert.throws(() => loadSettings({ REDIS_URL }), (e: unknown) => e instanceof SettingsError
      && e.message === `invalid setting REDIS_URL=${JSON.stringify(shown)}: the service does not ask Redis Sentinel where the primary is; set REDIS_URL to the primary itself, redis://HOST:PORT or rediss://…, by an address a failover moves to the new primary (a DNS name, a proxy)`, REDIS_URL);
  }
});

test('the KEYS_SECRET value never appears in its error', () => {
  assert.throws(() => loadSettings({ KEYS_SECRET: 'hunter2' }), (e: unknown) => !(e as Error).message.includes('hunter2'));
});

test('TRUST_PROXY is a number of proxies or a list of proxy addresses and ranges, never every hop (INTERFACE section 8)', () => {
  assert.equal(loadSettings({}).trustProxy, false);
  assert.equal(loadSettings({ TRUST_PROXY: '0' }).trustProxy, false);
  assert.equal(loadSettings({ TRUST_PROXY: '1' }).trustProxy, 1);
  assert.equal(loadSettings({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadSettings({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']);
});

test('BACKCHANNEL_ALLOW_PRIVATE is on by default only when the service itself runs on http on a loopback host', () => {
  for (const base of ['http://localhost:3000', 'http://127.0.0.1:4000', 'http://[::1]:3000']) {
    assert.equal(loadSettings({ BASE_URL: base }).backchannelAllowPrivate, true, base);
  }
  for (const base of ['https://id.example', 'http://id.example', 'https://localhost:3000', 'http://10.0.0.5']) {
    assert.equal(loadSettings({ BASE_URL: base }).backchannelAllowPrivate, false, base);
  }
  assert.equal(loadSettings({ BASE_URL: 'https://id.example', BACKCHANNEL_ALLOW_PRIVATE: '1' }).backchannelAllowPrivate, true);
  assert.equal(loadSettings({ BASE_URL: 'http://localhost:3000', BACKCHANNEL_ALLOW_PRIVATE: '0' }).backchannelAllowPrivate, false);
  assert.equal(loadSettings({}).logoutDeliveryIntervalSeconds, 2);
  assert.throws(() => loadSettings({ LOGOUT_DELIVERY_INTERVAL: 'often' }), /LOGOUT_DELIVERY_INTERVAL/);
  assert.throws(() => loadSettings({ BACKCHANNEL_ALLOW_PRIVATE: 'yes' }), /BACKCHANNEL_ALLOW_PRIVATE.*1 or 0/);
});

test('DYNAMIC_REGISTRATION is on unless set off, and takes only on or off (INTERFACE section 13)', () => {
  assert.equal(loadSettings({}).dynamicRegistration, true);
  assert.equal(loadSettings({ DYNAMIC_REGISTRATION: 'on' }).dynamicRegistration, true);
  assert.equal(loadSettings({ DYNAMIC_REGISTRATION: 'off' }).dynamicRegistration, false);
  for (const value of ['0', 'false', 'OFF', 'no']) {
    assert.throws(() => loadSettings({ DYNAMIC_REGISTRATION: value }), /invalid setting DYNAMIC_REGISTRATION=.*accepts on or off/, value);
  }
});

test('client ID metadata documents: on by default, private addresses allowed only for a loopback http BASE_URL, hosts a checked list (INTERFACE section 13)', () => {
  assert.deepEqual(loadSettings({ BASE_URL: 'https://id.example' }).clientMetadata, { enabled: true, allowPrivate: false, hosts: undefined });
  assert.equal(loadSettings({ BASE_URL: 'http://localhost:3000' }).clientMetadata.allowPrivate, true);
  assert.equal(loadSettings({ BASE_URL: 'http://localhost:3000', CLIENT_METADATA_ALLOW_PRIVATE: '0' }).clientMetadata.allowPrivate, false);
  assert.equal(loadSettings({ BASE_URL: 'https://id.example', CLIENT_METADATA_ALLOW_PRIVATE: '1' }).clientMetadata.allowPrivate, true);
  assert.equal(loadSettings({ CLIENT_ID_METADATA_DOCUMENTS: 'off' }).clientMetadata.enabled, false);
  assert.equal(loadSettings({ CLIENT_ID_METADATA_DOCUMENTS: 'on' }).clientMetadata.enabled, true);
  assert.throws(() => loadSettings({ CLIENT_ID_METADATA_DOCUMENTS: '1' }), /CLIENT_ID_METADATA_DOCUMENTS.*on or off/);
  assert.throws(() => loadSettings({ CLIENT_METADATA_ALLOW_PRIVATE: 'yes' }), /CLIENT_METADATA_ALLOW_PRIVATE.*1 or 0/);
  assert.deepEqual(loadSettings({ CLIENT_METADATA_HOSTS: ' Agents.Example , *.example.com' }).clientMetadata.hosts, ['agents.example', '*.example.com']);
  for (const bad of ['https://agents.example', 'agents.example:443', '*example.com', 'a..b', '*.', 'agents.example,', 'ex ample.com']) {
    assert.throws(() => loadSettings({ CLIENT_METADATA_HOSTS: bad }), /CLIENT_METADATA_HOSTS/, bad);
  }
});

test('SECRET_SCANNING_KEYS takes GitHub\'s public-key list, inline or as a file, and refuses any key but P-256', () => {
  assert.deepEqual(loadSettings({}).secretScanningKeys, []);
  const pem = (curve: string) => generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const list = (key: string) => JSON.stringify({ public_keys: [{ key_identifier: 'k1', key, is_current: true }] });
  const p256 = pem('P-256');
  assert.deepEqual(loadSettings({ SECRET_SCANNING_KEYS: list(p256) }).secretScanningKeys, [{ id: 'k1', pem: p256 }]);
  assert.throws(() => loadSettings({ SECRET_SCANNING_KEYS: list(pem('P-384')) }), /invalid setting SECRET_SCANNING_KEYS=/);
  assert.throws(() => loadSettings({ SECRET_SCANNING_KEYS: '/nonexistent/keys.json' }), /SECRET_SCANNING_KEYS/);
  assert.throws(() => loadSettings({ SECRET_SCANNING_KEYS: '{"public_keys": []}' }), /SECRET_SCANNING_KEYS/);
});

test('SITE_NAME names the site in every language and SITE_NAME_<LANGUAGE> in one; unset, the catalogs name it and MAIL_FROM says Community (INTERFACE section 12)', () => {
  assert.deepEqual(loadSettings({}).siteNames, {});
  assert.equal(loadSettings({}).mailFrom, 'Community <no-reply@localhost>');
  assert.deepEqual(loadSettings({ SITE_NAME: ' Riverside ', SITE_NAME_ZH_CN: '河畔' }).siteNames, { en: 'Riverside', 'zh-CN': '河畔', 'zh-TW': 'Riverside' });
  assert.deepEqual(loadSettings({ SITE_NAME_ZH_TW: '河畔' }).siteNames, { 'zh-TW': '河畔' });
  assert.equal(loadSettings({ SITE_NAME_ZH_TW: '河畔' }).mailFrom, '河畔 <no-reply@localhost>', 'the sender carries a name set in any language');
  assert.equal(loadSettings({ SITE_NAME: 'Riverside' }).mailFrom, 'Riverside <no-reply@localhost>');
  assert.equal(loadSettings({ SITE_NAME: 'A.B\\C' }).mailFrom, '"A.B\\\\C" <no-reply@localhost>', 'specials make a quoted string, its backslash escaped (RFC 5322 3.2.4)');
  assert.equal(loadSettings({ SITE_NAME: 'Riverside', MAIL_FROM: 'Ops <ops@example.com>' }).mailFrom, 'Ops <ops@example.com>');
});

test('a site name with a control or format character, a quote, an angle bracket or a colon, or over 60 characters, is refused', () => {
  for (const name of ['River\u202Eedis', 'River\nside', 'River\u200Bside', 'Say "hi"', 'a<b>', 'Bank: Riverside', 'x'.repeat(61)]) {
    assert.throws(() => loadSettings({ SITE_NAME: name }), (error: Error) => error instanceof SettingsError && /SITE_NAME/.test(error.message), JSON.stringify(name));
  }
  assert.throws(() => loadSettings({ SITE_NAME_ZH_CN: '河\u202E畔' }), /SITE_NAME_ZH_CN/);
  assert.equal(loadSettings({ SITE_NAME: '河'.repeat(60) }).siteNames.en, '河'.repeat(60), '60 characters, not bytes');
});

test('APPEAL_CONTACT, where a member who is not active appeals, is an https URL or mailto: one address; unset, none; anything else a page could not safely link to stops the start', () => {
  assert.equal(loadSettings({}).appealContact, undefined);
  assert.equal(loadSettings({ APPEAL_CONTACT: 'https://help.example.com/appeals?from=sign-in' }).appealContact, 'https://help.example.com/appeals?from=sign-in');
  assert.equal(loadSettings({ APPEAL_CONTACT: ' mailto:appeals@example.com ' }).appealContact, 'mailto:appeals@example.com');
  for (const APPEAL_CONTACT of [
    'javascript:alert(1)', 'JavaScript://example.com/%0aalert(1)', 'data:text/html,hi', 'http://help.example.com/', 'help.example.com', 'https://',
    'https://user:secret@help.example.com/', 'https://help.example.com/\nappeals', 'https://help.example.com/\u202eslaeppa', 'mailto:', 'mailto:appeals',
    'mailto:a@example.com,b@example.com', 'mailto:appeals@example.com?body=hi', `https://help.example.com/${'a'.repeat(2000)}`,
  ]) {
    assert.throws(() => loadSettings({ APPEAL_CONTACT }),
      (e: unknown) => e instanceof SettingsError && /^invalid setting APPEAL_CONTACT=[^]*: accepts an https:\/\/ URL .* or mailto:/.test(e.message) && !e.message.includes('secret'), JSON.stringify(APPEAL_CONTACT));
  }
});

test('APPEAL_CONTACT\'s mailto: is one plain address: nothing percent-encoded, which a mail client decodes into another recipient or a header line, and a host of dot-separated labels', () => {
  assert.equal(loadSettings({ APPEAL_CONTACT: "mailto:o'brien.appeals+site@mail.example.com" }).appealContact, "mailto:o'brien.appeals+site@mail.example.com");
  for (const APPEAL_CONTACT of [
    'mailto:a%2Cthief%40evil.example@example.com', 'mailto:a%0d%0aBcc%3a@example.com', 'mailto:%61ppeals@example.com', 'mailto:a#@example.com',
    'mailto:(staff)@example.com', 'mailto:a\\b@example.com', 'mailto:appeals@..', 'mailto:appeals@-', 'mailto:appeals@example', 'mailto:appeals@example.com.',
  ]) {
    assert.throws(() => loadSettings({ APPEAL_CONTACT }), (e: unknown) => e instanceof SettingsError && /^invalid setting APPEAL_CONTACT=/.test(e.message), JSON.stringify(APPEAL_CONTACT));
  }
});

test('APPEAL_CONTACT is at most 2000 characters as the page links it, after the URL parser percent-encodes what was typed', () => {
  assert.equal(loadSettings({ APPEAL_CONTACT: `https://help.example.com/${'a'.repeat(1900)}` }).appealContact?.length, 1925);
  assert.throws(() => loadSettings({ APPEAL_CONTACT: `https://help.example.com/${'é'.repeat(1000)}` }), /^.*invalid setting APPEAL_CONTACT=/);
});
