import { findClient, registerClient, setRequirePushedRequests } from '../../core/oauth/clients.js';
import type { BaseDeps } from '../../base-deps.js';
import type { ClientRegistration } from '../../core/oauth/clients.js';
import type { Client, ClientType } from '../../core/oauth/ports.js';
import type { IdTokenAlg } from '../../core/oidc/ports.js';
import { formatUtc } from '../../core/time.js';
import { UsageError, defineCommand, optionalString, requiredString } from '../command.js';
import { withNotices } from '../owner-notices.js';
import { changeAppStatus, rotateAppSecret } from '../../core/staff/console.js';
import { findUser } from './lookup.js';
import { REASON_OPTION } from './staff.js';

/**
 * Why a change to a client was not written, the store writing only an active client's (as
 * /settings/developers changes it): there is no such client, or it is deactivated.
 */
async function unchangedClient(deps: BaseDeps, clientId: string, deactivatedClient: string): Promise<UsageError> {
  const client = await findClient(deps.stores, clientId);
  return new UsageError(client ? `client "${clientId}" is deactivated; a deactivated client ${deactivatedClient}` : `unknown client "${clientId}"`);
}

export const clientCreate = defineCommand({
  name: 'client create',
  summary: 'register a client (an app that signs users in)',
  description: 'Registers a client (an app that signs users in). A confidential client\'s secret is printed once; only its hash is kept.',
  usage: '--name N --type confidential|public --redirect-uri URI [--redirect-uri URI…] [--post-logout-redirect-uri URI…] [--backchannel-logout-uri URI] [--owner U] [--homepage URL] [--description T] [--id-token-alg RS256|ES256] [--require-par]',
  options: {
    'require-par': { type: 'boolean' },
    name: { type: 'string' }, type: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true }, 'backchannel-logout-uri': { type: 'string' },
    owner: { type: 'string' }, homepage: { type: 'string' }, description: { type: 'string' }, 'id-token-alg': { type: 'string' },
  },
  help: {
    name: 'the name the consent page shows',
    type: 'confidential (a server that keeps a secret) or public (a browser or native app; PKCE, no secret)',
    'redirect-uri': 'a callback address, matched exactly; give it once per address (at most 10)',
    'post-logout-redirect-uri': 'where /oauth/logout may send the person back to, matched exactly; once per address',
    'backchannel-logout-uri': 'where the app receives back-channel logout tokens (https, or http on loopback)',
    owner: 'the account that owns the app and can manage it at /settings/developers',
    homepage: 'the app\'s home page, shown on the consent page',
    description: 'a few words about the app',
    'id-token-alg': 'how its id_tokens are signed (default RS256)',
    'require-par': 'accept only pushed authorization requests from it (RFC 9126; POST /api/oauth/par)',
  },
  prints: '{"client_id","client_secret"?,"type","redirect_uris","owner"?}: client_secret for a confidential client only; owner (a username) when --owner is given',
  async run(deps, values) {
    const type = requiredString(values, 'type');
    if (type !== 'confidential' && type !== 'public') throw new UsageError(`unknown type "${type}": use confidential or public`);
    const redirectUris = (values['redirect-uri'] as string[] | undefined) ?? [];
    if (redirectUris.length === 0) throw new UsageError('--redirect-uri is required');
    const alg = optionalString(values, 'id-token-alg') ?? 'RS256';
    if (alg !== 'RS256' && alg !== 'ES256') throw new UsageError(`unknown id-token-alg "${alg}": use RS256 or ES256`);
    const ownerName = optionalString(values, 'owner');
    const owner = ownerName === undefined ? undefined : await findUser(deps, ownerName);
    const registration: ClientRegistration = {
      name: requiredString(values, 'name'),
      type: type as ClientType,
      redirectUris,
      ownerId: owner?.id ?? null,
      homepageUrl: optionalString(values, 'homepage') ?? '',
      description: optionalString(values, 'description') ?? '',
      idTokenAlg: alg as IdTokenAlg,
      postLogoutRedirectUris: (values['post-logout-redirect-uri'] as string[] | undefined) ?? [],
      backchannelLogoutUri: optionalString(values, 'backchannel-logout-uri') ?? null,
      requirePushedAuthorizationRequests: values['require-par'] === true,
    };
    const { client, secret } = await registerClient(deps.stores, deps.clock, registration);
    deps.audit.record({ audit: 'client.registered', clientId: client.clientId, ownerId: client.ownerId, type: client.type, via: 'cli' });
    // The owner and the logout fields only when given, so the answer INTERFACE section 9 lists
    // stays as it was. The owner as the account spells its username, as `client list` names it.
    return {
      client_id: client.clientId,
      ...(secret === undefined ? {} : { client_secret: secret }),
      type: client.type,
      redirect_uris: client.redirectUris,
      ...(owner === undefined ? {} : { owner: owner.username }),
      ...(client.postLogoutRedirectUris.length === 0 ? {} : { post_logout_redirect_uris: client.postLogoutRedirectUris }),
      ...(client.backchannelLogoutUri === null ? {} : { backchannel_logout_uri: client.backchannelLogoutUri }),
      ...(client.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    };
  },
  human: (r) => [
    `client_id:     ${r.client_id}`,
    ...('client_secret' in r ? [`client_secret: ${r.client_secret}   (shown once: store it now)`] : []),
    `type:          ${r.type}`,
    `redirect_uris: ${r.redirect_uris.join(' ')}`,
    ...(r.owner ? [`owner:         ${r.owner}`] : []),
    ...(r.post_logout_redirect_uris ? [`post_logout_redirect_uris: ${r.post_logout_redirect_uris.join(' ')}`] : []),
    ...(r.backchannel_logout_uri ? [`backchannel_logout_uri:    ${r.backchannel_logout_uri}`] : []),
    ...(r.require_pushed_authorization_requests ? ['require_pushed_authorization_requests: true'] : []),
  ].join('\n'),
});

export const clientList = defineCommand({
  name: 'client list',
  summary: 'list the registered clients',
  description: 'Lists the registered clients, oldest first, without secrets.',
  usage: '[--owner U]',
  options: { owner: { type: 'string' } },
  help: { owner: 'only the clients this account owns' },
  prints: '{"clients":[{"client_id","name","type","status","owner","redirect_uris","created_at"}]}: owner is a username or null; "self_registered": true for an app that registered itself (RFC 7591)',
  async run(deps, values) {
    const ownerName = optionalString(values, 'owner');
    const clients = ownerName === undefined
      ? await deps.stores.clients.listAll()
      : await deps.stores.clients.listByOwner((await findUser(deps, ownerName)).id);
    const owners = new Map<number, string>();
    for (const id of new Set(clients.map((c) => c.ownerId).filter((id): id is number => id !== null))) {
      const user = await deps.stores.users.findById(id);
      if (user) owners.set(id, user.username);
    }
    const listed = (client: Client) => ({
      client_id: client.clientId,
      name: client.name,
      type: client.type,
      status: client.status,
      owner: client.ownerId === null ? null : owners.get(client.ownerId) ?? null,
      ...(client.selfRegistered ? { self_registered: true } : {}),
      redirect_uris: client.redirectUris,
      created_at: formatUtc(client.createdAt),
    });
    return { clients: clients.map(listed) };
  },
  human: (r) => (r.clients.length === 0 ? 'no clients' : r.clients.map((c) =>
    `${c.client_id}  ${c.type.padEnd(12)}  ${c.status.padEnd(11)}  ${c.name}${c.owner !== null ? ` (owner ${c.owner})` : 'self_registered' in c ? ' (registered itself)' : ''}`).join('\n')),
});

export const clientRotateSecret = defineCommand({
  name: 'client rotate-secret',
  summary: 'give a confidential client a new secret',
  description: 'Gives a confidential client a new secret, printed once; the old one fails at once (unless PREVIOUS_CLIENT_SECRET_HOURS keeps it working a while). '
    + 'Written to the staff log, and to the owner\'s security log as from the site\'s staff, with the notice mail the owner\'s own rotation sends.',
  usage: `--client-id ID ${REASON_OPTION.usage}`,
  options: { 'client-id': { type: 'string' }, ...REASON_OPTION.options },
  help: { 'client-id': 'the client', ...REASON_OPTION.help },
  prints: '{"client_id","client_secret"}',
  async run(deps, values, io) {
    const clientId = requiredString(values, 'client-id');
    const reason = REASON_OPTION.read(values);
    const client = await deps.stores.clients.findById(clientId);
    if (!client) throw new UsageError(`unknown client "${clientId}"`);
    if (client.type !== 'confidential') throw new UsageError(`client "${clientId}" is public and has no secret`);
    // As at /settings/developers: a deactivated app authenticates no more, and gets no new secret,
    // also when staff deactivate it meanwhile (the write is conditional on its being active). The
    // secret, the owner's security-log line and the staff-log entry land in one transaction.
    const rotated = await rotateAppSecret(withNotices(deps), { via: 'cli' }, clientId, reason);
    if (!rotated) throw await unchangedClient(deps, clientId, 'gets no new secret');
    deps.audit.record({ audit: 'client.secret_rotated', clientId, ownerId: client.ownerId, via: 'cli' });
    // The owner's notice mail once the secret is printed: its failure must not lose the secret.
    io.afterAnswer('the owner\'s notice mail could not be queued', rotated.announce);
    return { client_id: clientId, client_secret: rotated.secret };
  },
  human: (r) => `client_id:     ${r.client_id}\nclient_secret: ${r.client_secret}   (shown once; the old secret stops working at once, unless PREVIOUS_CLIENT_SECRET_HOURS keeps it working a while)`,
});

export const clientDeactivate = defineCommand({
  name: 'client deactivate',
  summary: 'deactivate a client and end its tokens',
  description: 'Deactivates a client: every token it holds stops working at once, and it can get no new ones. Written to the staff log.',
  usage: `--client-id ID ${REASON_OPTION.usage}`,
  options: { 'client-id': { type: 'string' }, ...REASON_OPTION.options },
  help: { 'client-id': 'the client', ...REASON_OPTION.help },
  prints: '{"client_id","status"}',
  async run(deps, values) {
    const clientId = requiredString(values, 'client-id');
    const reason = REASON_OPTION.read(values);
    // Deactivated already: the same answer, and no second audit event (as at /settings/developers).
    const found = await findClient(deps.stores, clientId);
    if (found?.status === 'deactivated') return { client_id: found.clientId, status: found.status };
    const changed = found && await changeAppStatus(withNotices(deps), { via: 'cli' }, clientId, 'deactivated', reason);
    if (!changed?.ok) throw new UsageError(`unknown client "${clientId}"`);
    deps.audit.record({ audit: 'client.deactivated', clientId, ownerId: found!.ownerId, via: 'cli' });
    return { client_id: clientId, status: changed.value };
  },
  human: (r) => `client ${r.client_id} is ${r.status}; its tokens no longer work`,
});

export const clientRequirePar = defineCommand({
  name: 'client require-par',
  summary: 'require (or stop requiring) pushed authorization requests',
  description: 'Sets whether an active client must push its authorization requests (RFC 9126 5): when required, /oauth/authorize refuses every request of it that does not come with a request_uri from POST /api/oauth/par.',
  usage: '--client-id ID [--off]',
  options: { 'client-id': { type: 'string' }, off: { type: 'boolean' } },
  help: { 'client-id': 'the client', off: 'stop requiring them (the default of a new client)' },
  prints: '{"client_id","require_pushed_authorization_requests"}',
  async run(deps, values) {
    const clientId = requiredString(values, 'client-id');
    const required = values.off !== true;
    if (!(await setRequirePushedRequests(deps.stores, deps.clock, clientId, required))) throw await unchangedClient(deps, clientId, 'keeps its settings');
    return { client_id: clientId, require_pushed_authorization_requests: required };
  },
  human: (r) => `client ${r.client_id} ${r.require_pushed_authorization_requests ? 'must now push' : 'no longer has to push'} its authorization requests`,
});
