/**
 * A role's listener while it waits for its database at start
 * (core/runtime/database-wait.ts): on the role's own address and port, with its TLS
 * pair, it answers the probes only. `/healthz` is 200 (the process lives:
 * a supervisor must not restart it for a database that is away), `/readyz`
 * 503 with each check and the reason its database is unavailable, and every
 * other request 503 `service-unavailable` with Retry-After, as an RFC 9457
 * problem. Once the database answers and the plugins have started, the role
 * closes it and its real app listens on the same port (RoleRuntime.listen);
 * in between, for the moment the port changes hands, a new connection is
 * refused. docs/operations.md, "Waiting for the database".
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { HEALTH_PATH, READY_PATH, readinessAnswer, type Readiness } from '../runtime/health.js';
import { HSTS_HEADER, type TlsServerOptions } from './tls.js';

/** Seconds a client is told to wait before it tries again. */
export const WAITING_RETRY_AFTER_SEC = 5;

/** The probes' listener of a role still waiting for its database. */
export class WaitingListener {
  private server: Server | undefined;
  /** The port it listened on (the one the OS chose for 0), which the role's app then takes. */
  port: number | undefined;

  constructor(
    private readonly readiness: Readiness,
    private readonly https: TlsServerOptions | undefined,
  ) {}

  /** Listens on `host`:`port`; answers the URL a person would open. */
  async open(host: string, port: number): Promise<string> {
    const handler = (request: IncomingMessage, response: ServerResponse) => void this.answer(request, response);
    const server = this.https ? createHttpsServer(this.https, handler) : createHttpServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address();
    const actual = typeof address === 'object' && address ? address.port : port;
    this.port = actual;
    const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
    return `${this.https ? 'https' : 'http'}://${shown}:${actual}`;
  }

  /** Whether it listens. */
  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  /** Stops listening and ends its connections; safe to call twice or before open. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    // Every answer closes its connection: the real app takes this port over, and a client must not be holding an idle
    // keep-alive connection to this listener then (a request sent on it as it closes would fail as "other side closed").
    response.setHeader('connection', 'close');
    const probe = request.method === 'GET' || request.method === 'HEAD';
    if (probe && path === HEALTH_PATH) return this.send(response, 200, 'application/json; charset=utf-8', { status: 'ok' });
    if (probe && path === READY_PATH) {
      const { status, body } = readinessAnswer(await this.readiness.report());
      return this.send(response, status, 'application/json; charset=utf-8', body);
    }
    // A body on its way is not read: the connection closes after the answer, as every answer's does.
    response.setHeader('retry-after', String(WAITING_RETRY_AFTER_SEC));
    return this.send(response, 503, 'application/problem+json', {
      type: 'https://cnc-gateway.dev/problems/service-unavailable',
      title: 'The service is temporarily unavailable',
      status: 503,
      detail: 'the service is starting: its database does not answer yet (GET /readyz says why); retry in a moment',
    });
  }

  private send(response: ServerResponse, status: number, type: string, body: unknown): void {
    response.statusCode = status;
    response.setHeader('content-type', type);
    response.setHeader('cache-control', 'no-store');
    response.setHeader('x-content-type-options', 'nosniff');
    if (this.https) response.setHeader('strict-transport-security', HSTS_HEADER);
    response.end(JSON.stringify(body));
  }
}
