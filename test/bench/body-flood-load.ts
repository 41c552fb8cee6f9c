/**
 * The body-flood benchmark's load, run as a child process so that building
 * and sending 8 MB bodies does not take turns with the gateway on its event
 * loop: `clients` anonymous clients post 8 MB JSON bodies (deeply nested and
 * wide, in turn) to a POST interface and to /mcp for `seconds`. A job with
 * `probeEveryMs` instead times GET /api/health that often; the probe runs in a
 * process of its own, so that sending the flood does not delay it.
 */

export interface FloodJob {
  base: string;
  clients: number;
  seconds: number;
  /** Set: this process probes /api/health and sends no bodies. */
  probeEveryMs?: number;
  bodyBytes: number;
}

export interface FloodResult {
  /** /api/health latencies, ms. */
  latencies: number[];
  /** Bodies posted, and how the gateway answered them (status → count). */
  posted: number;
  statuses: Record<string, number>;
  error?: string;
}

/** An array nested as deep as the size allows: `[[[…]]]`. */
function nestedBody(bytes: number): Buffer {
  const depth = Math.floor(bytes / 2);
  return Buffer.concat([Buffer.alloc(depth, '['), Buffer.alloc(depth, ']')]);
}

/** A flat array of small numbers: `[1,1,…,1]`, millions of elements. */
function wideBody(bytes: number): Buffer {
  const count = Math.floor((bytes - 2) / 2);
  const out = Buffer.alloc(count * 2 + 1, '1,');
  out[0] = 0x5b;
  out[out.length - 1] = 0x5d;
  return out;
}

async function run(job: FloodJob): Promise<FloodResult> {
  const bodies = [nestedBody(job.bodyBytes), wideBody(job.bodyBytes)];
  const targets = [`${job.base}/api/config/machine/add`, `${job.base}/mcp`];
  const until = Date.now() + job.seconds * 1000;
  const statuses: Record<string, number> = {};
  let posted = 0;
  const flood = Array.from({ length: job.probeEveryMs === undefined ? job.clients : 0 }, async (_, client) => {
    for (let i = client; Date.now() < until; i++) {
      try {
        const res = await fetch(targets[i % targets.length] as string, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: bodies[(i >> 1) % bodies.length],
        });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      } catch (err) {
        const key = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : 'error';
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
      posted++;
    }
  });
  const latencies: number[] = [];
  const probe = (async () => {
    while (job.probeEveryMs !== undefined && Date.now() < until) {
      const s = performance.now();
      const res = await fetch(`${job.base}/api/health`);
      await res.arrayBuffer();
      latencies.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, job.probeEveryMs));
    }
  })();
  await Promise.all([probe, ...flood]);
  return { latencies, posted, statuses };
}

process.on('message', (job: FloodJob) => {
  run(job).then(
    (result) => process.send?.(result),
    (err: unknown) => process.send?.({ latencies: [], posted: 0, statuses: {}, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
