// Instructions a signed token costs (docs/performance.md, decision 71): the service's `signCompact`
// (node:crypto, dist/core/oidc/jws.js: run `npm run build` first) against jose's `SignJWT`, which
// signed id_tokens before, for RS256 and ES256, with the claims of an id_token with `profile`.
// Counted by callgrind, not timed: a count repeats whatever else the machine does. Each case is
// run with N tokens and with none, 16 at a time; the difference over N is one token's share.
//   node bench/jws-instructions.mjs            (valgrind on the PATH; one JSON line out)
//   N=200 node bench/jws-instructions.mjs
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

async function signTokens(way, alg, jwk, count) {
  const { SignJWT, importJWK } = await import('jose');
  const { importSigningKey, signCompact } = await import('../dist/core/oidc/jws.js');
  const cryptoKey = await importJWK(jwk, alg);
  const key = { kid: 'k1', alg, privateKey: importSigningKey(jwk, alg) };
  const header = { alg, kid: 'k1', typ: 'JWT' };
  const claims = () => ({
    iss: 'https://idp.example.com', sub: '42', aud: 'app-123456', iat: 1_764_900_000, exp: 1_764_903_600,
    azp: 'app-123456', auth_time: 1_764_900_000, at_hash: 'abcdefghijklmnopqrstuv', sid: 'sid-abcdefghijklmnop',
    preferred_username: 'zhangsan', name: '张三', picture: 'https://example.com/avatars/42', profile: 'https://example.com/u/zhangsan', zoneinfo: 'Asia/Shanghai',
  });
  const ways = {
    jose: () => new SignJWT(claims()).setProtectedHeader(header).sign(cryptoKey),
    ours: () => signCompact(key, 'JWT', claims()),
  };
  // One of each before the counted part, so that both have loaded and compiled what they use.
  await ways.jose();
  await ways.ours();
  let started = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (started < count) {
      started++;
      await ways[way]();
    }
  }));
}

if (process.env.JWS_CASE) {
  const { way, alg, jwk, count } = JSON.parse(process.env.JWS_CASE);
  await signTokens(way, alg, jwk, count);
} else {
  const n = Number(process.env.N ?? 100);
  const keys = {
    RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
  };
  const counted = (way, alg, count) => {
    const run = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, self], {
      env: { ...process.env, JWS_CASE: JSON.stringify({ way, alg, jwk: keys[alg], count }) }, encoding: 'utf8',
    });
    const collected = /Collected : (\d+)/.exec(run.stderr);
    if (!collected) throw new Error(`callgrind gave no count: ${run.stderr.slice(-500)}`);
    return Number(collected[1]);
  };
  const instructionsPerToken = {};
  for (const alg of ['RS256', 'ES256']) {
    for (const way of ['jose', 'ours']) instructionsPerToken[`${way} ${alg}`] = Math.round((counted(way, alg, n) - counted(way, alg, 0)) / n);
  }
  console.log(JSON.stringify({ tokens: n, instructionsPerToken }));
}
