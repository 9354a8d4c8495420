/**
 * Leaked credentials (INTERFACE section 11): POST /api/credentials/revoke, anyone's report of
 * strings found exposed (after GitHub's credential revocation API), and POST
 * /api/credentials/secret-scanning, a secret scanner's signed alert in the format of GitHub's
 * secret scanning partner program. JSON bodies only; the raw bytes are kept, since a signature
 * covers them exactly as sent.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OAuthError } from '../../core/errors.js';
import { MAX_CREDENTIAL_LENGTH, MAX_REPORTED_CREDENTIALS, admitLeakReport, handleLeakReport, reportedStrings } from '../../core/credentials/leaked-credentials.js';
import { ScanningKeys, alertFeedback, alertMatches, reportedFromAlert } from '../../core/credentials/secret-scanning.js';
import { type HeaderSet, registerSecurityHeaders } from '../plugins/security-headers.js';
import { clientAddress } from '../client-address.js';
import { afterCommit } from '../logging.js';

/**
 * A report's body: 1,000 strings of the longest length with their quotes and commas fit; anything
 * larger is refused with 413 before it is read whole.
 */
export const REPORT_BODY_LIMIT_BYTES = MAX_REPORTED_CREDENTIALS * (MAX_CREDENTIAL_LENGTH + 4) + 1024;
/** An alert's body: 1,000 matches, each with its URL and the rest. */
export const ALERT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const NOT_JSON = Symbol('not JSON');
/** The error line of a report whose credentials are revoked but whose owners' notices could not all be queued. */
const NOTICES_LOST = 'a leak report revoked its credentials, but an owner\'s notice mail could not be queued';

/** The raw body as sent; anything but `application/json` is `invalid_request`. */
function rawJson(request: FastifyRequest): Buffer {
  if (!(request.body instanceof Buffer)) {
    throw new OAuthError('invalid_request', 'The body must be JSON, sent with Content-Type: application/json.');
  }
  return request.body;
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new OAuthError('invalid_request', 'The body is not valid JSON.');
  }
}

export async function credentialRoutes(app: FastifyInstance, options: { securityHeaders: HeaderSet }): Promise<void> {
  registerSecurityHeaders(app, options.securityHeaders);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, NOT_JSON));
  const keys = new ScanningKeys(app.deps.settings.secretScanningKeys);

  app.post('/api/credentials/revoke', { bodyLimit: REPORT_BODY_LIMIT_BYTES }, async (request, reply) => {
    // Counted before anything else, so a flood of malformed reports is refused like any other.
    await admitLeakReport(app.deps, clientAddress(request));
    // GitHub's shape, {"credentials": […]}, or the bare list INTERFACE section 11 speaks of.
    const body = parseJson(rawJson(request)) as { credentials?: unknown } | unknown[] | null;
    const strings = reportedStrings(Array.isArray(body) ? body : typeof body === 'object' && body !== null ? body.credentials : undefined);
    const { announce } = await handleLeakReport(app.deps, { source: 'report', address: clientAddress(request), requestId: request.id, credentials: strings.map((value) => ({ value })) });
    await afterCommit(request.log, NOTICES_LOST, {}, announce);
    // The same answer whatever the strings named (T54): 202 and an empty JSON object.
    return reply.code(202).header('cache-control', 'no-store').type('application/json; charset=utf-8').send('{}');
  });

  app.post('/api/credentials/secret-scanning', { bodyLimit: ALERT_BODY_LIMIT_BYTES }, async (request, reply) => {
    if (!keys.configured) throw new OAuthError('not_found', 'No secret scanner is configured here (SECRET_SCANNING_KEYS).');
    const raw = rawJson(request);
    const header = (name: string) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const keyId = header('github-public-key-identifier');
    try {
      keys.verify(keyId, header('github-public-key-signature'), raw);
    } catch (error) {
      // The operator's sign that the scanner moved to a key not configured yet (or of a forgery).
      request.log.warn({ keyId: keyId?.slice(0, 100) }, 'secret-scanning alert refused: no valid signature');
      throw error;
    }
    const matches = alertMatches(parseJson(raw));
    const { known, announce } = await handleLeakReport(app.deps, { source: 'secret_scanning', address: clientAddress(request), requestId: request.id, credentials: reportedFromAlert(matches) }, { identify: true });
    await afterCommit(request.log, NOTICES_LOST, {}, announce);
    return reply.header('cache-control', 'no-store').send(alertFeedback(matches, known));
  });
}
