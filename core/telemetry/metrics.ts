/**
 * A role's Prometheus metrics: one prom-client Registry per role (roles in
 * one process keep theirs apart), with the default process metrics
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
 * `nodejs_eventloop_lag_seconds`, …), and every HTTP request the role
 * answers counted and timed by one hook on its app:
 *
 * - `http_requests_total{route, method, code}`
 * - `http_request_duration_seconds{route, method, code}` (histogram)
 *
 * `route` is the route's template (`/api/v1/programs/:id`), never the path a
 * client sent, so the series stay bounded; a request no route matched is
 * `route="unmatched"`. Parts of the role register their own metrics on the
 * registry (`counter`, `gauge`, `histogram`), with names and units after
 * Prometheus' conventions (seconds, bytes, `_total` for counters).
 *
 * `GET /metrics` serves the text exposition format to a caller presenting
 * the metrics token (core/telemetry/metrics-token.ts); anyone else gets 401.
 * docs/operations.md, "Metrics".
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration } from 'prom-client';
import type { MetricsToken } from './metrics-token.js';

export const METRICS_PATH = '/metrics';

/** Methods kept as they are in the `method` label; anything else is `OTHER`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Request durations: 1 ms to 30 s. */
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type HttpLabels = 'route' | 'method' | 'code';

export class RoleMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<HttpLabels>;
  private readonly durations: Histogram<HttpLabels>;

  constructor(readonly role: string) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = this.counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status code.', labelNames: ['route', 'method', 'code'] });
    this.durations = this.histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from a request\'s arrival to its answer, by route template, method and status code.',
      labelNames: ['route', 'method', 'code'],
      buckets: HTTP_DURATION_BUCKETS,
    });
  }

  /** A counter on this role's registry. */
  counter<L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return new Counter<L>({ ...config, registers: [this.registry] });
  }

  /** A gauge on this role's registry (give `collect` to read the value at scrape time). */
  gauge<L extends string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
    return new Gauge<L>({ ...config, registers: [this.registry] });
  }

  /** A histogram on this role's registry. */
  histogram<L extends string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
    return new Histogram<L>({ ...config, registers: [this.registry] });
  }

  /** Counts and times one answered request. */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void {
    const labels = {
      route: request.routeOptions.url ?? 'unmatched',
      method: KNOWN_METHODS.has(request.method) ? request.method : 'OTHER',
      code: String(reply.statusCode),
    };
    this.requests.inc(labels);
    this.durations.observe(labels, reply.elapsedTime / 1000);
  }

  /** The exposition text and its content type. */
  async exposition(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** Records every request of `app` on `metrics` and serves `GET /metrics` to callers presenting `token`. */
export function serveMetrics(app: FastifyInstance, metrics: RoleMetrics, token: MetricsToken): void {
  app.addHook('onResponse', async (request, reply) => metrics.observeRequest(request, reply));
  app.get(METRICS_PATH, async (request, reply) => {
    if (!token.accepts(request.headers.authorization)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').header('cache-control', 'no-store').type('text/plain; charset=utf-8')
        .send('metrics: send the metrics token as Authorization: Bearer <token> (METRICS_TOKEN, or the token shown at the first start)\n');
    }
    const { text, contentType } = await metrics.exposition();
    return reply.code(200).header('cache-control', 'no-store').type(contentType).send(text);
  });
}
