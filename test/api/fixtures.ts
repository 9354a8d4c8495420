/**
 * What the resource API tests need, made through the core functions and the stores (the OAuth
 * endpoints that issue tokens belong to another issue): users, clients, access and personal tokens.
 */
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/core/accounts/accounts.js';
import { registerClient } from '../../src/core/oauth/clients.js';
import { generateToken, hashSecret } from '../../src/core/credentials/formats.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import type { User } from '../../src/core/accounts/ports.js';
import type { Client } from '../../src/core/oauth/ports.js';
import type { Deps } from '../../src/deps.js';

export function unique(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

export function newUser(deps: Deps, fields: { bio?: string; member?: boolean; level?: number; xp?: number } = {}): Promise<User> {
  return createAccount(deps.stores, deps.clock, { username: unique('user'), password: 'correct horse battery', ...fields });
}

export async function newClient(deps: Deps): Promise<Client> {
  const { client } = await registerClient(deps.stores, deps.clock, {
    name: 'Test app', type: 'confidential', redirectUris: ['https://app.example/cb'],
  });
  return client;
}

export interface IssuedAccess {
  token: string;
  grantId: number;
  client: Client;
}

/** An OAuth access token as the token endpoint would issue it: a grant, then the hashed token. */
export async function newAccessToken(deps: Deps, user: User, scope: string, client?: Client): Promise<IssuedAccess> {
  const app = client ?? await newClient(deps);
  const now = deps.clock.now();
  const grant = await deps.stores.grants.create({ userId: user.id, clientId: app.clientId, scope, nonce: null, authTime: now }, now);
  return { token: await anotherAccessToken(deps, user, scope, { grantId: grant.id, client: app }), grantId: grant.id, client: app };
}

/** One more access token of `issued`'s grant, as a refresh (or another instance of the app) gets one. */
export async function anotherAccessToken(deps: Deps, user: User, scope: string, issued: Omit<IssuedAccess, 'token'>): Promise<string> {
  const now = deps.clock.now();
  const token = generateToken('access');
  await deps.stores.tokens.insertAccess({
    tokenHash: hashSecret(token), grantId: issued.grantId, clientId: issued.client.clientId, userId: user.id, scope,
    createdAt: now, expiresAt: now + deps.settings.accessTokenTtlSeconds * 1000,
  });
  return token;
}

export async function newPersonalToken(deps: Deps, user: User, scopes: string[], expiresInDays: number | null = 90) {
  return createPersonalToken(deps.stores, deps.clock, deps.tokenMarks, { userId: user.id, name: 'script', scopes, expiresInDays });
}

/** GET with an optional bearer token (or a raw Authorization header). */
export function get(baseUrl: string, path: string, auth?: { token?: string; header?: string }): Promise<Response> {
  const headers: Record<string, string> = {};
  if (auth?.token !== undefined) headers.authorization = `Bearer ${auth.token}`;
  if (auth?.header !== undefined) headers.authorization = auth.header;
  return fetch(baseUrl + path, { headers, redirect: 'manual' });
}
