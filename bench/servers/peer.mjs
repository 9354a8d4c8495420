// The peer (issue 8 g): node-oidc-provider with its in-memory adapter, or with PEER_SQLITE (a file)
// the durable one of peer-sqlite-adapter.mjs; a public client (PKCE, no secret) and a confidential
// one (client_secret_basic), PKCE required, refresh tokens rotated on every use, and an interaction
// that signs in `login_hint` and consents to what was asked, so a returning browser gets its code at
// once. PORT; client settings from the environment.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import { sqliteAdapterFactory } from './peer-sqlite-adapter.mjs';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const redirectUri = process.env.PEER_REDIRECT_URI;
const profile = JSON.parse(process.env.PEER_PROFILE ?? '{}');

// The stock memory adapter keeps 1,000 entries (LRU); under load that evicts live sessions, grants
// and tokens within seconds, so the same adapter class gets a store large enough for the whole run.
const adapter = process.env.PEER_SQLITE
  ? sqliteAdapterFactory(process.env.PEER_SQLITE)
  : ((store) => (model) => new MemoryAdapter(model, store))(new LRU({ maxSize: 5_000_000 }));

const provider = new Provider(issuer, {
  adapter,
  clients: [
    {
      client_id: 'bench-public', token_endpoint_auth_method: 'none', redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    },
    {
      client_id: 'bench-confidential', client_secret: process.env.PEER_CLIENT_SECRET, redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  pkce: { required: () => true },
  scopes: ['openid', 'profile', 'offline_access'],
  claims: { openid: ['sub'], profile: ['nickname', 'picture', 'profile', 'bio', 'member', 'level', 'xp', 'created_at'] },
  features: { devInteractions: { enabled: false } },
  cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: 3600, AuthorizationCode: 300, IdToken: 3600, RefreshToken: 30 * 86400, Session: 86400, Grant: 86400, Interaction: 600 },
  findAccount: async (_ctx, sub) => ({
    accountId: sub,
    claims: async () => ({
      sub, nickname: sub, picture: profile.avatarUrl, profile: profile.profileUrl, bio: profile.bio,
      member: profile.member, level: profile.level, xp: profile.xp, created_at: profile.createdAt,
    }),
  }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});

const callback = provider.callback();

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const accountId = details.session?.accountId ?? details.params.login_hint ?? 'user000001';
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  // Sign in only when asked to: a new login would start a new session and forget other clients' grants.
  const result = details.prompt.name === 'login' ? { login: { accountId }, consent: { grantId } } : { consent: { grantId } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const server = createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((error) => { res.statusCode = 500; res.end(String(error)); });
    return;
  }
  callback(req, res);
});
server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
