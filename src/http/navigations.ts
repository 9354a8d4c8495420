/**
 * Pages that start work on the asking address's account answer a browser only when it goes to
 * them. `/oauth/authorize`, `/login` and `/signup` may fetch an app's client ID metadata document,
 * and each fetch holds a place of the address's share until it ends (docs/oauth.md, "Fetches at
 * once"). Without this guard, another site's page could spend its visitors' shares with a few
 * images pointing here, and each image whose id fails would hold a place for 5 s (attack56).
 */
import type { FastifyRequest } from 'fastify';
import { OAuthError } from '../core/errors.js';

/**
 * Refuses a browser's request that is not a top-level navigation: an image, a script, a frame, a
 * fetch. Fetch Metadata (W3C) tells them apart: `Sec-Fetch-Dest` is `document` only for a page
 * the browser goes to. Nobody is refused for lacking it (client libraries, scripts and older
 * browsers send none; Node's fetch sends `Sec-Fetch-Mode` alone), and a page going to another
 * page, a link or a form of an app included, is a navigation. The refusal comes before anything
 * is looked up, so it tells nothing about the app asked for. These pages refuse to be framed
 * anyway (`frame-ancestors 'none'`), but the browser asks for a frame before it reads that.
 */
export async function refuseUnlessNavigatedTo(request: FastifyRequest): Promise<void> {
  const destination = request.headers['sec-fetch-dest'];
  if (destination === undefined || destination === 'document') return;
  throw new OAuthError('access_denied', 'This page opens only when the browser goes to it, not inside another page.', { status: 403 });
}
