import { deactivateClient, registerClient, rotateClientSecret } from '../../core/clients.js';
import type { ClientRegistration } from '../../core/clients.js';
import type { ClientType, IdTokenAlg } from '../../core/ports.js';
import { UsageError, defineCommand, optionalString, requiredString } from '../command.js';
import { findUser } from './lookup.js';

export const clientCreate = defineCommand({
  name: 'client create',
  usage: 'client create --name N --type confidential|public --redirect-uri URI [--redirect-uri URI…] [--post-logout-redirect-uri URI…] [--backchannel-logout-uri URI] [--owner U] [--homepage URL] [--description T] [--id-token-alg RS256|ES256]',
  options: {
    name: { type: 'string' }, type: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true }, 'backchannel-logout-uri': { type: 'string' },
    owner: { type: 'string' }, homepage: { type: 'string' }, description: { type: 'string' }, 'id-token-alg': { type: 'string' },
  },
  async run(deps, values) {
    const type = requiredString(values, 'type');
    if (type !== 'confidential' && type !== 'public') throw new UsageError(`unknown type "${type}": use confidential or public`);
    const redirectUris = (values['redirect-uri'] as string[] | undefined) ?? [];
    if (redirectUris.length === 0) throw new UsageError('--redirect-uri is required');
    const alg = optionalString(values, 'id-token-alg') ?? 'RS256';
    if (alg !== 'RS256' && alg !== 'ES256') throw new UsageError(`unknown id-token-alg "${alg}": use RS256 or ES256`);
    const owner = optionalString(values, 'owner');
    const registration: ClientRegistration = {
      name: requiredString(values, 'name'),
      type: type as ClientType,
      redirectUris,
      ownerId: owner === undefined ? null : (await findUser(deps, owner)).id,
      homepageUrl: optionalString(values, 'homepage') ?? '',
      description: optionalString(values, 'description') ?? '',
      idTokenAlg: alg as IdTokenAlg,
      postLogoutRedirectUris: (values['post-logout-redirect-uri'] as string[] | undefined) ?? [],
      backchannelLogoutUri: optionalString(values, 'backchannel-logout-uri') ?? null,
    };
    const { client, secret } = await registerClient(deps.stores, deps.clock, registration);
    // The logout fields only when given, so the answer INTERFACE section 9 lists stays as it was.
    return {
      client_id: client.clientId,
      ...(secret === undefined ? {} : { client_secret: secret }),
      type: client.type,
      redirect_uris: client.redirectUris,
      ...(client.postLogoutRedirectUris.length === 0 ? {} : { post_logout_redirect_uris: client.postLogoutRedirectUris }),
      ...(client.backchannelLogoutUri === null ? {} : { backchannel_logout_uri: client.backchannelLogoutUri }),
    };
  },
  human: (r) => [
    `client_id:     ${r.client_id}`,
    ...('client_secret' in r ? [`client_secret: ${r.client_secret}   (shown once: store it now)`] : []),
    `type:          ${r.type}`,
    `redirect_uris: ${r.redirect_uris.join(' ')}`,
    ...(r.post_logout_redirect_uris ? [`post_logout_redirect_uris: ${r.post_logout_redirect_uris.join(' ')}`] : []),
    ...(r.backchannel_logout_uri ? [`backchannel_logout_uri:    ${r.backchannel_logout_uri}`] : []),
  ].join('\n'),
});

export const clientRotateSecret = defineCommand({
  name: 'client rotate-secret',
  usage: 'client rotate-secret --client-id ID',
  options: { 'client-id': { type: 'string' } },
  async run(deps, values) {
    const clientId = requiredString(values, 'client-id');
    const client = await deps.stores.clients.findById(clientId);
    if (!client) throw new UsageError(`unknown client "${clientId}"`);
    if (client.type !== 'confidential') throw new UsageError(`client "${clientId}" is public and has no secret`);
    const secret = await rotateClientSecret(deps.stores, deps.clock, clientId);
    if (secret === undefined) throw new UsageError(`unknown client "${clientId}"`);
    return { client_id: clientId, client_secret: secret };
  },
  human: (r) => `client_id:     ${r.client_id}\nclient_secret: ${r.client_secret}   (shown once; the old secret no longer works)`,
});

export const clientDeactivate = defineCommand({
  name: 'client deactivate',
  usage: 'client deactivate --client-id ID',
  options: { 'client-id': { type: 'string' } },
  async run(deps, values) {
    const clientId = requiredString(values, 'client-id');
    const client = await deactivateClient(deps.stores, deps.clock, clientId);
    if (!client) throw new UsageError(`unknown client "${clientId}"`);
    return { client_id: client.clientId, status: client.status };
  },
  human: (r) => `client ${r.client_id} is ${r.status}; its tokens no longer work`,
});
