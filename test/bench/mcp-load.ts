/**
 * The MCP benchmark's load generator, run as a child process so that making
 * requests and parsing answers neither takes turns with the servers being
 * measured on their event loop nor counts in their RSS (a real client is
 * another process, usually on another machine). Jobs arrive as IPC messages;
 * each answer carries the latencies (ms) and calls/s of one job.
 */

export interface LoadJob {
  url: string;
  token: string | null;
  tool: string;
  args: Record<string, unknown>;
  calls: number;
  concurrency: number;
  protocol: string;
  /** More request headers (the cloud's accessToken). */
  headers?: Record<string, string>;
}

export interface LoadResult {
  latencies: number[];
  perSec: number;
  /** CPU time (user + system) the load generator spent on the job, µs. */
  cpuMicros?: number;
  error?: string;
}

/** Runs `calls` tools/call requests with `concurrency` in flight. */
export async function drive(job: LoadJob): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  const body = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: job.tool, arguments: job.args } });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': job.protocol,
    ...(job.token ? { authorization: `Bearer ${job.token}` } : {}),
    ...job.headers,
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < job.calls) {
        const id = next++;
        const s = performance.now();
        const res = await fetch(job.url, { method: 'POST', headers, body: body(id) });
        const json = (await res.json()) as { result?: { isError?: boolean } };
        if (res.status !== 200 || json.result?.isError) throw new Error(`call ${id} failed: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { latencies, perSec: job.calls / ((performance.now() - t0) / 1000), cpuMicros: cpu.user + cpu.system };
}

process.on('message', (job: LoadJob) => {
  drive(job).then(
    (result) => process.send?.(result),
    (err: unknown) => process.send?.({ latencies: [], perSec: 0, error: err instanceof Error ? err.message : String(err) }),
  );
});
// The benchmark ends the child by closing the channel.
process.on('disconnect', () => process.exit(0));
