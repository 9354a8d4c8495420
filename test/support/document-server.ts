/**
 * A real server of client ID metadata documents (draft-ietf-oauth-client-id-metadata-document) on
 * 127.0.0.1, for the tests (plain http, which CLIENT_METADATA_ALLOW_PRIVATE accepts on a loopback
 * host) and for the bench (https with a self-signed certificate, so that a fetch costs what it
 * costs against a real host: the TLS handshake included). Answers per path, counts each request.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';

/** How a path of the document server answers. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before the status line. */
  delayMs?: number;
  /** Send the headers, then one byte of body a second, never ending. */
  drip?: boolean;
}

/** A self-signed certificate for 127.0.0.1 (ECDSA P-256), its key, and the PEM file a client may trust it by. */
export interface LoopbackCertificate {
  key: string;
  cert: string;
  /** The certificate's PEM file in `dir` (for NODE_EXTRA_CA_CERTS). */
  certFile: string;
}

/** Makes a certificate for https://127.0.0.1 with openssl, valid two days, its files in `dir`. */
export function loopbackCertificate(dir: string): LoopbackCertificate {
  const keyFile = join(dir, 'documents-key.pem');
  const certFile = join(dir, 'documents-cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

export class DocumentServer {
  readonly answers = new Map<string, Answer | ((path: string) => Answer)>();
  readonly hits = new Map<string, number>();
  private readonly open = new Set<ServerResponse>();
  private constructor(private readonly server: Server, readonly origin: string) {}

  /** Listens on a free port of 127.0.0.1: over https with `tls`, else over http. */
  static async start(tls?: Pick<LoopbackCertificate, 'key' | 'cert'>): Promise<DocumentServer> {
    let documents: DocumentServer | undefined;
    const handler = (request: IncomingMessage, response: ServerResponse) => documents!.handle(request, response);
    const server: Server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, handler) : createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    documents = new DocumentServer(server, `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as { port: number }).port}`);
    return documents;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Serves a valid document for `path` (its client_id is its URL), with `extra` members and headers. */
  document(path: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): string {
    this.answers.set(path, this.validDocument(path, extra, headers));
    return this.url(path);
  }

  /** Serves a valid document, as `document` does, for every path that starts with `prefix`; returns the URLs' common start. */
  documentsUnder(prefix: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): string {
    this.answers.set(`${prefix}*`, (path) => this.validDocument(path, extra, headers));
    return this.url(prefix);
  }

  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  private validDocument(path: string, extra: Record<string, unknown>, headers: Record<string, string>): Answer {
    return { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({
      client_id: this.url(path), client_name: 'Agent Smith', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', ...extra,
    }) };
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const path = request.url!;
    this.hits.set(path, this.count(path) + 1);
    const found = this.answers.get(path) ?? [...this.answers.entries()].find(([prefix]) => prefix.endsWith('*') && path.startsWith(prefix.slice(0, -1)))?.[1];
    const answer = typeof found === 'function' ? found(path) : found ?? { status: 404, body: 'not found' };
    this.open.add(response);
    response.on('close', () => this.open.delete(response));
    setTimeout(() => {
      response.writeHead(answer.status ?? 200, answer.headers ?? {});
      if (!answer.drip) {
        response.end(answer.body ?? '');
        return;
      }
      response.write('{');
      const timer = setInterval(() => response.write(' '), 1000);
      response.on('close', () => clearInterval(timer));
    }, answer.delayMs ?? 0);
  }

  close(): Promise<void> {
    for (const response of this.open) response.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

