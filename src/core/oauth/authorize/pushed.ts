/**
 * Pushed authorization requests at the authorization endpoint (RFC 9126 4). The first GET of
 * `/oauth/authorize?client_id=…&request_uri=…` exchanges the `request_uri` for the parameters the
 * client pushed, in one conditional write (single use, 60 seconds, bound to the client), which
 * also keeps the stored request open for `PUSHED_FLOW_LIFETIME_SECONDS`. The flow then goes on as
 * for any request: the consent form carries those parameters, and with them a *marker*, an HMAC
 * under a server secret over the parameters, the stored request and a deadline, which shows that
 * they are exactly what the client pushed. Sign-in carries none of them: it returns to a short
 * address (`pushedReturnFields`: the client, the language and the marker), and the parameters are
 * read again from the stored request (`findOpen`), so a pushed request of any length comes back
 * from sign-in (RFC 9126 1: a request too large for a URL). The request's one answer (a code, or an
 * error sent back to the client) first completes the stored request, in one conditional write
 * that deletes it: a marker of a completed request yields nothing more. A client that requires
 * pushed requests (RFC 9126 5) is refused any request that has neither a `request_uri` nor a
 * valid marker.
 */
import { createHmac } from 'node:crypto';
import { constantTimeEqual, generateOpaqueId, hashSecret } from '../../credentials/formats.js';
import { OAuthError } from '../../errors.js';
import { type Params, paramsFromEntries, single } from '../params.js';
import type { SharedKeys } from '../../credentials/shared-keys.js';
import type { Stores } from '../../stores.js';
import { type Instant, hasExpired } from '../../time.js';
import { localeOfUiLocales } from '../../locales.js';
import { PUSHED_MARKER, fieldsAfterSignIn } from './request.js';

/** RFC 9126 2.2: the prefix of every `request_uri` the PAR endpoint answers with. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** RFC 9126 2.2 and INTERFACE section 11: a pushed request can be opened within 60 seconds. */
export const PUSHED_REQUEST_LIFETIME_SECONDS = 60;

/**
 * How long an opened pushed request may take through sign-in and consent: long enough to sign
 * up or find a second factor, short enough that a copied continuation address soon stops working.
 */
export const PUSHED_FLOW_LIFETIME_SECONDS = 30 * 60;

const REQUEST_URI_SHAPE = /^urn:ietf:params:oauth:request_uri:([A-Za-z0-9_-]{43})$/;
/** `until.requestHash.mac`: the deadline (epoch seconds), the stored request, the HMAC over both and the parameters. */
const MARKER_SHAPE = /^([1-9]\d{0,11})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

/** A fresh `request_uri` and the hash it is stored under (the random part is never stored). */
export function newRequestUri(): { requestUri: string; requestHash: string } {
  const random = generateOpaqueId();
  return { requestUri: `${REQUEST_URI_PREFIX}${random}`, requestHash: hashSecret(random) };
}

/** An opened pushed request on its way through sign-in and consent: the stored request, open until `until` (epoch seconds). */
export interface PushedFlow {
  requestHash: string;
  until: number;
}

/**
 * What a marker is for: the consent `form`, whose fields carry the request, or sign-in's `return`
 * address (`pushedReturnFields`), served only to a session signed in since it was made
 * (`signedInSince`). One is never the other: a return marker is signed over the fields as sign-in
 * returns them, without `max_age` or `login` in `prompt`, and posted with them as the consent
 * form's, it made a code for a session the return address is never served to.
 */
type MarkerUse = 'form' | 'return';

async function mac(keys: SharedKeys, fields: ReadonlyArray<readonly [string, string]>, flow: PushedFlow, use: MarkerUse): Promise<string> {
  const signed = use === 'form' ? [flow.until, flow.requestHash, fields] : [flow.until, flow.requestHash, fields, use];
  return createHmac('sha256', await keys.key('pushed-request-hmac')).update(JSON.stringify(signed)).digest('base64url');
}

/** The marker for `fields` (the request's parameters, `requestFields` order) of `flow`, for `use` (the consent form's unless told). */
export async function pushedMarker(keys: SharedKeys, fields: ReadonlyArray<readonly [string, string]>, flow: PushedFlow, use: MarkerUse = 'form'): Promise<string> {
  return `${flow.until}.${flow.requestHash}.${await mac(keys, fields, flow, use)}`;
}

/**
 * The flow of a marker that is valid for `fields` now, for `use` (the consent form's unless told),
 * or `undefined`. Whether its request is still open is not read here: completing it is the one
 * conditional write that tells.
 */
export async function verifyPushedMarker(keys: SharedKeys, fields: ReadonlyArray<readonly [string, string]>, marker: string, now: Instant, use: MarkerUse = 'form'): Promise<PushedFlow | undefined> {
  const match = MARKER_SHAPE.exec(marker);
  if (!match) return undefined;
  const flow = { until: Number(match[1]), requestHash: match[2]! };
  if (hasExpired(flow.until * 1000, now)) return undefined;
  return constantTimeEqual(match[3]!, await mac(keys, fields, flow, use)) ? flow : undefined;
}

/** The stored request a marker names, unchecked: `verifyPushedMarker` decides whether it holds. */
function requestHashOf(marker: string): string | undefined {
  return MARKER_SHAPE.exec(marker)?.[2];
}

/**
 * The fields of the address sign-in returns to for the opened pushed request `flow`, whose
 * parameters as sign-in returns to them are `fields` (`fieldsAfterSignIn`): its `client_id`, the
 * first supported tag of its `ui_locales`, for the sign-in pages' language (INTERFACE section 12),
 * and a marker over `fields`. Its parameters stay stored: they are read again on the way back
 * (`openPushedRequest`), so the address is short however long the request (RFC 9126 1).
 *
 * The marker names when the sign-in was asked for (`askedAt`, to the second): its deadline is that
 * moment plus `PUSHED_FLOW_LIFETIME_SECONDS`, never earlier than the flow's own, and the address
 * is served only to a session signed in since (`signInAskedAt`). That is when the request was
 * opened, unless the sign-in is asked later (its consent approved past its max_age): then the
 * sign-in must be newer than that. The stored request's own deadline still ends the flow
 * (`findOpen`, `complete`).
 */
export async function pushedReturnFields(keys: SharedKeys, fields: ReadonlyArray<readonly [string, string]>, flow: PushedFlow, askedAt: Instant): Promise<Array<[string, string]>> {
  const clientId = fields.find(([name]) => name === 'client_id')?.[1] ?? '';
  const locale = localeOfUiLocales(fields.find(([name]) => name === 'ui_locales')?.[1]);
  const asked = { requestHash: flow.requestHash, until: Math.max(flow.until, Math.floor(askedAt / 1000) + PUSHED_FLOW_LIFETIME_SECONDS) };
  return [['client_id', clientId], ...(locale === undefined ? [] : [['ui_locales', locale] as [string, string]]), [PUSHED_MARKER, await pushedMarker(keys, fields, asked, 'return')]];
}

/**
 * Whether `params` is an address `pushedReturnFields` made: a marker and no request of its own
 * (every authorization request has a `response_type`, RFC 6749 4.1.1).
 */
function isPushedReturn(params: Params): boolean {
  const has = (name: string) => (params.get(name) ?? []).some((v) => v !== '');
  return has(PUSHED_MARKER) && !has('response_type');
}

/** The page error for a pushed request no longer open: its marker yields nothing more. */
const ANSWERED_OR_TOO_LATE = 'This authorization request was already answered, or took too long to complete: start again from the application.';

/**
 * Completes the pushed request `flow` stands for, before its answer (a code or an error) goes to
 * the client: one conditional write, so of racing answers exactly one goes, and a marker of a
 * completed request yields no other (RFC 9126 4: the request_uri's single use covers the flow it opened).
 */
export async function completePushedRequest(stores: Pick<Stores, 'pushedRequests'>, flow: PushedFlow, now: Instant): Promise<void> {
  if (!(await stores.pushedRequests.complete(flow.requestHash, now))) throw pageError(ANSWERED_OR_TOO_LATE);
}

/** An error shown as a page: without the pushed parameters there is no verified redirect URI. */
function pageError(description: string): OAuthError {
  return new OAuthError('invalid_request', description, { status: 400 });
}

/**
 * The parameters of the opened pushed request a return address (`pushedReturnFields`) names, as
 * sign-in returns to them, with its marker: read, not consumed, so the address works until the
 * request is answered or its flow's time is up (`PUSHED_FLOW_LIFETIME_SECONDS`), and only for
 * the client that pushed it. Any other parameter of the address is ignored.
 */
async function resumePushedRequest(stores: Stores, keys: SharedKeys, params: Params, now: Instant): Promise<OpenedPushedRequest> {
  let marker: string | undefined;
  let clientId: string | undefined;
  try {
    marker = single(params, PUSHED_MARKER);
    clientId = single(params, 'client_id');
  } catch {
    throw pageError('The pushed or client_id parameter is repeated or malformed.');
  }
  const requestHash = marker === undefined ? undefined : requestHashOf(marker);
  const stored = requestHash === undefined || clientId === undefined ? undefined : await stores.pushedRequests.findOpen(requestHash, clientId, now);
  const fields = stored && fieldsAfterSignIn(paramsFromEntries(stored.parameters));
  const flow = fields && await verifyPushedMarker(keys, fields, marker!, now, 'return');
  if (fields === undefined || flow === undefined) throw pageError(ANSWERED_OR_TOO_LATE);
  // The request goes on with a consent form's marker, shown only on the page served to a session
  // that passed `signedInSince`.
  return { params: paramsFromEntries([...fields, [PUSHED_MARKER, await pushedMarker(keys, fields, flow)]]), signedInSince: signInAskedAt(flow) };
}

/**
 * When the sign-in the return address of `flow` stands for was asked: its marker's deadline less
 * the flow's lifetime, to the second (`pushedReturnFields`); the moment the request was opened,
 * unless asked again later.
 */
function signInAskedAt(flow: PushedFlow): Instant {
  return (flow.until - PUSHED_FLOW_LIFETIME_SECONDS) * 1000;
}

/**
 * A pushed request opened (`params`, with its marker), and, when sign-in returned to it by
 * reference, `signedInSince`: the session must have signed in since the sign-in was asked (`signInAskedAt`).
 * Such an address is made only for a request that sent the browser to sign in (prompt=login, a
 * max_age run out, on the GET or at the consent form's approval, a login_hint naming another
 * account, or nobody signed in), and its parameters
 * come back without that demand (`fieldsAfterSignIn`); the sign-in it asked for is what lets them
 * (OpenID Connect Core 3.1.2.1: the OP must actively re-authenticate). Without this, the address
 * opened in the browser without signing in would skip it.
 */
export interface OpenedPushedRequest {
  params: Params;
  signedInSince?: Instant;
}

/**
 * RFC 9126 4: the parameters of the request a `request_uri` names, consumed, with a fresh marker;
 * or those of an opened one that sign-in returns to (`resumePushedRequest`); `undefined` when
 * `params` is neither. Any other parameter of the GET is ignored: only what the client pushed counts.
 */
export async function openPushedRequest(stores: Stores, keys: SharedKeys, params: Params, now: Instant): Promise<OpenedPushedRequest | undefined> {
  let requestUri: string | undefined;
  let clientId: string | undefined;
  try {
    requestUri = single(params, 'request_uri');
    clientId = single(params, 'client_id');
  } catch {
    throw pageError('The request_uri or client_id parameter is repeated or malformed.');
  }
  if (requestUri === undefined) return isPushedReturn(params) ? resumePushedRequest(stores, keys, params, now) : undefined;
  if (clientId === undefined) throw pageError('The request names no application: send client_id with the request_uri (RFC 9126 4).');
  const random = REQUEST_URI_SHAPE.exec(requestUri)?.[1];
  // RFC 9126 4: single use, 60 seconds, and only for the client that pushed it. A request_uri of
  // another kind (RFC 9101's, an address to fetch) is not supported.
  const until = Math.floor(now / 1000) + PUSHED_FLOW_LIFETIME_SECONDS;
  const requestHash = random === undefined ? undefined : hashSecret(random);
  const pushed = requestHash === undefined ? undefined : await stores.pushedRequests.consume(requestHash, clientId, now, until * 1000);
  if (!pushed || requestHash === undefined) {
    throw pageError('The request_uri is unknown, expired, already used, or was pushed by another application. If you develop this application: push the authorization request again (POST /api/oauth/par) and send the browser here at once; each request_uri works once, for 60 seconds.');
  }
  const marker = await pushedMarker(keys, pushed.parameters, { requestHash, until });
  return { params: paramsFromEntries([...pushed.parameters, [PUSHED_MARKER, marker]]) };
}
