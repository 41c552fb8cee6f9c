/**
 * A real Prometheus (Debian's `prometheus` package) as a child process for
 * the peer tests: a generated config scraping the given targets every
 * second with the metrics token, its storage in a temp dir, listening on a
 * free port of 127.0.0.1; queried over its HTTP API.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../fixtures/free-port.js';

const INSTALL_HINT = 'install the Debian package `prometheus` (apt-get install prometheus) to run the metrics peer test';

export function prometheusPath(): string {
  for (const candidate of ['/usr/bin/prometheus', '/usr/local/bin/prometheus']) if (existsSync(candidate)) return candidate;
  throw new Error(`prometheus not found; ${INSTALL_HINT}`);
}

export interface RunningPrometheus {
  url: string;
  /** The value of an instant PromQL query's series, by the given label. */
  query(promql: string, byLabel: string): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `targets` (job name → host:port) with `token`; resolves once its API answers. */
export async function startPrometheus(targets: Record<string, string>, token: string): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
  const jobs = Object.entries(targets).map(([job, target]) => [
    `  - job_name: ${job}`,
    '    scrape_interval: 1s',
    `    authorization: { credentials_file: ${join(dir, 'token')} }`,
    `    static_configs: [{ targets: ['${target}'] }]`,
  ].join('\n'));
  writeFileSync(join(dir, 'prometheus.yml'), `global: { scrape_interval: 1s, evaluation_interval: 1s }\nscrape_configs:\n${jobs.join('\n')}\n`);
  const port = await freePort();
  const child = spawn(prometheusPath(), [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${stderr}`);
    if ((await fetch(`${url}/-/ready`).then((r) => r.status, () => 0)) === 200) break;
    if (Date.now() > deadline) throw new Error(`prometheus was not ready within 20 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async query(promql, byLabel) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success') throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`);
      return Object.fromEntries(body.data.result.map((r) => [r.metric[byLabel] ?? '', Number(r.value[1])]));
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
