/**
 * Tracing modes a benchmark alternates in one run: off, and on at sampling
 * 1.0 and 0.1 (parent-based ratio), exporting over OTLP/HTTP protobuf to a
 * receiver in this process that reads and drops what it is sent, so the
 * export's cost is paid as in production. Start it before the servers
 * measured, so their HTTP span hooks are installed; in `off` those hooks
 * remain and return at once (an upper bound of what tracing costs while off:
 * a process without any OTEL variable does not install them at all).
 */
import { createServer } from 'node:http';
import { startSdk, type StartedSdk } from '../../core/telemetry/sdk.js';
import { setTracingBackend } from '../../core/telemetry/tracing.js';

export const TRACING_MODES = ['off', 'ratio 1.0', 'ratio 0.1'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

export interface TracingModes {
  use(mode: TracingMode): void;
  /** Spans received by the OTLP receiver (export requests). */
  exports(): number;
  stop(): Promise<void>;
}

export async function startTracingModes(roles: readonly string[]): Promise<TracingModes> {
  let received = 0;
  const sink = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const port = (sink.address() as { port: number }).port;
  const settings = (ratio: number) => ({
    tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
    protocol: 'http/protobuf' as const,
    headers: {},
    serviceNames: Object.fromEntries(roles.map((r) => [r, `cncgw-${r}`])),
    sampler: 'parentbased_traceidratio' as const,
    samplerArg: ratio,
    resourceAttributes: {},
  });
  const tenth: StartedSdk = await startSdk(settings(0.1));
  const full: StartedSdk = await startSdk(settings(1));
  return {
    use: (mode) => setTracingBackend(mode === 'off' ? undefined : mode === 'ratio 1.0' ? full.backend : tenth.backend),
    exports: () => received,
    async stop() {
      await tenth.shutdown();
      await full.shutdown();
      await new Promise<void>((r) => sink.close(() => r()));
    },
  };
}
