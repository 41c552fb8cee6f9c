/**
 * The agent's own listener (`mtconnect.host`:`port`, HTTPS with the same
 * certificate files as the other listeners): the MTConnect REST requests,
 * GET only, as cppagent routes them — `/probe` (also `/` and `/{device}`),
 * `/current`, `/sample`, `/assets`, `/asset/{ids}`, and the same under
 * `/{device}/…`. Read-only and without authentication, as MTConnect agents
 * are (docs/mtconnect.md, "Security"). Every refusal is an MTConnectError
 * document in the client's format; nothing a client sends gives a 5xx.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { TlsSource } from '../../core/http/tls.js';
import { AgentError } from './agent-error.js';
import { type Agent, type Answer, type Format } from './agent.js';
import { byteLength } from './documents.js';
import { assetParams, currentParams, deviceTypeParam, formatParam, sampleParams } from './request-params.js';
import { checkSampleRange } from './stream-reads.js';
import { StreamSession } from './streaming.js';

type Query = Record<string, string | string[] | undefined>;
type Params = { device?: string; ids?: string };

/** Characters of the request URI an error document quotes. */
const URI_MAX = 1024;

/** The format a request asks for: `format=`, else JSON when Accept names application/json, else XML. */
function formatOf(request: FastifyRequest): Format {
  const query = request.query as Query;
  try {
    const asked = formatParam(query);
    if (asked) return asked;
  } catch {
    // A wrong `format` is reported by the handler, in XML.
  }
  const accept = request.headers.accept ?? '';
  return accept.split(',').some((a) => a.trim().split(';')[0]!.endsWith('json')) ? 'json' : 'xml';
}

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  reply.code(answer.status).header('content-type', answer.contentType).header('cache-control', 'no-store, max-age=0');
  if (typeof answer.body === 'string') return reply.send(answer.body);
  // Chunks are written one after the other, never joined (documents.ts, framed); the length is known, so it is said.
  return reply.header('content-length', byteLength(answer.body)).send(Readable.from(answer.body, { objectMode: false }));
}

type Fail = (request: FastifyRequest, reply: FastifyReply, err: unknown, document: string) => Promise<FastifyReply>;

/** Serves the agent's requests on `app`; the streams it runs are in `streams`. Answers how a refusal is sent. */
function route(app: FastifyInstance, agent: Agent, streams: Set<StreamSession>, logger: Logger): Fail {
  const fail = async (request: FastifyRequest, reply: FastifyReply, err: unknown, document: string) => {
    const error = err instanceof AgentError ? err : new AgentError('InternalError', 'The agent could not answer this request');
    if (!(err instanceof AgentError)) logger.error({ err, url: request.url.slice(0, URI_MAX) }, 'mtconnect: request failed');
    return send(reply, await agent.errorAnswer(formatOf(request), error, request.url.slice(0, URI_MAX), document));
  };
  const handle = (document: string, work: (request: FastifyRequest, reply: FastifyReply, query: Query, params: Params) => Promise<FastifyReply | void>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        return await work(request, reply, request.query as Query, request.params as Params);
      } catch (err) {
        return fail(request, reply, err, document);
      }
    };

  const probe = handle('MTConnectDevices', async (request, reply, query, params) => {
    formatParam(query);
    const device = params.device !== undefined ? agent.device(params.device) : undefined;
    return send(reply, await agent.probe(formatOf(request), device, deviceTypeParam(query)));
  });
  for (const url of ['/', '/probe', '/:device', '/:device/probe']) app.get(url, probe);

  const current = handle('MTConnectStreams', async (request, reply, query, params) => {
    formatParam(query);
    const p = currentParams(query);
    const filter = agent.filter(params.device !== undefined ? agent.device(params.device) : undefined, p.path, deviceTypeParam(query));
    // HEAD of a stream answers one document's head: a stream would never end.
    if (p.interval === undefined || request.method === 'HEAD') return send(reply, await agent.current(formatOf(request), filter, p.at));
    const session = openStream(request, reply);
    void session.run(() => session.current(filter, p.interval!));
  });
  app.get('/current', current);
  app.get('/:device/current', current);

  const sample = handle('MTConnectStreams', async (request, reply, query, params) => {
    formatParam(query);
    const p = sampleParams(query);
    const filter = agent.filter(params.device !== undefined ? agent.device(params.device) : undefined, p.path, deviceTypeParam(query));
    if (p.interval === undefined || request.method === 'HEAD') return send(reply, (await agent.sample(formatOf(request), { from: p.from, to: p.to, count: p.count, filter })).answer);
    checkSampleRange(await agent.header(), { from: p.from, count: p.count });
    if (p.count < 0) throw new AgentError('InvalidRequest', "A stream reads forward: 'count' must be positive");
    const session = openStream(request, reply);
    void session.run(() => session.sample({ from: p.from, count: p.count, filter, interval: p.interval!, heartbeat: p.heartbeat }));
  });
  app.get('/sample', sample);
  app.get('/:device/sample', sample);

  const assets = handle('MTConnectAssets', async (request, reply, query, params) => {
    formatParam(query);
    const p = assetParams(query);
    const device = params.device ?? p.device;
    return send(reply, agent.assets(formatOf(request), { ...p, device: device !== undefined ? agent.device(device) : undefined }));
  });
  for (const url of ['/assets', '/asset', '/:device/assets', '/:device/asset']) app.get(url, assets);
  const byId = handle('MTConnectAssets', async (request, reply, query, params) => {
    formatParam(query);
    const ids = (params.ids ?? '').split(';').filter((id) => id !== '').slice(0, 100);
    if (ids.length === 0) throw new AgentError('InvalidRequest', 'No asset given');
    return send(reply, agent.assetsById(formatOf(request), ids));
  });
  app.get('/assets/:ids', byId);
  app.get('/asset/:ids', byId);

  function openStream(request: FastifyRequest, reply: FastifyReply): StreamSession {
    reply.hijack();
    const session = new StreamSession(agent, reply.raw, formatOf(request), request.url.slice(0, URI_MAX), () => streams.delete(session));
    streams.add(session);
    session.begin();
    return session;
  }

  app.setNotFoundHandler(async (request, reply) => {
    const method = request.method;
    const error =
      method === 'GET' || method === 'HEAD'
        ? new AgentError('InvalidURI', `No MTConnect request at ${request.url.split('?')[0]!.slice(0, 200)}`)
        : new AgentError('Unsupported', `The agent answers GET requests only, not ${method.slice(0, 16)}`);
    if (error.kind === 'Unsupported') reply.header('allow', 'GET, HEAD');
    return fail(request, reply, error, 'MTConnectDevices');
  });
  app.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const error = err.statusCode !== undefined && err.statusCode < 500 ? new AgentError('InvalidRequest', 'The request could not be read') : err;
    return fail(request, reply, error, 'MTConnectDevices');
  });
  return fail;
}

/** The agent's HTTP(S) listener. */
export class AgentServer {
  private readonly streams = new Set<StreamSession>();
  readonly app: FastifyInstance;

  constructor(
    agent: Agent,
    private readonly logger: Logger,
    private readonly tls: TlsSource | undefined,
  ) {
    // The router's refusals are answered by the routes' own refusal, known once the routes are made.
    const refusal: { fail?: Fail } = {};
    this.app = Fastify({
      // A path the router cannot read (bad escapes, a segment over maxParamLength) is a URI the agent does not serve.
      frameworkErrors: (_err, request, reply) => void refusal.fail?.(request, reply, new AgentError('InvalidURI', 'No MTConnect request at this URI'), 'MTConnectDevices'),
      ...(tls ? { https: tls.httpsOptions() } : {}),
      logger: false,
      // A device name or asset id longer than this is not the model's.
      routerOptions: { maxParamLength: 256 },
      bodyLimit: 1024,
      forceCloseConnections: true,
    }) as unknown as FastifyInstance;
    refusal.fail = route(this.app, agent, this.streams, logger);
  }

  /** Listens; answers the base URL a client points at. */
  async listen(host: string, port: number): Promise<string> {
    await this.app.listen({ host, port });
    if (this.tls) this.tls.attach(this.app.server as unknown as TlsServer);
    const address = this.app.server.address();
    const actual = typeof address === 'object' && address ? address.port : port;
    const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
    return `${this.tls ? 'https' : 'http'}://${shown.includes(':') ? `[${shown}]` : shown}:${actual}`;
  }

  /** How many streams are open. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    for (const stream of [...this.streams]) stream.close();
    this.tls?.close();
    await this.app.close().catch((err: unknown) => this.logger.warn({ err }, 'mtconnect: closing the listener failed'));
  }
}
