/**
 * The load of the rate-limit benchmark, in a process of its own (so that it
 * does not share the server's event loop): `clients` loops flooding GET
 * `url` as one source address (X-Forwarded-For 10.0.0.66, through a trusted
 * proxy) while a probe, another address, sends one request every 10 ms and
 * times each answer.
 */
import { Agent, request } from 'node:http';

export interface LoadJob {
  url: string;
  clients: number;
  seconds: number;
}

export interface LoadResult {
  probeMs: number[];
  probeStatuses: Record<string, number>;
  flood: Record<string, number>;
}

async function run(job: LoadJob): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: job.clients + 2 });
  const get = (address: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(job.url, { agent, headers: { 'x-forwarded-for': address } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  const until = Date.now() + job.seconds * 1000;
  const flood: Record<string, number> = {};
  const loops = Array.from({ length: job.clients }, async () => {
    while (Date.now() < until) {
      const status = await get('10.0.0.66');
      flood[status] = (flood[status] ?? 0) + 1;
    }
  });
  const probeMs: number[] = [];
  const probeStatuses: Record<string, number> = {};
  while (Date.now() < until) {
    const started = performance.now();
    const status = await get('10.0.0.7');
    probeMs.push(performance.now() - started);
    probeStatuses[status] = (probeStatuses[status] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(loops);
  agent.destroy();
  return { probeMs, probeStatuses, flood };
}

process.once('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send?.(result),
    (err: Error) => process.send?.({ error: err.message }),
  );
});
