/** Small statistics for benchmark reports. */
import { readFileSync } from 'node:fs';

/** The p-th percentile (0-100) of `values` by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Reads `--key value` or `--key=value` from args. */
export function option(args: readonly string[], key: string, fallback: number): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === `--${key}`) return Number(args[i + 1]);
    if (arg.startsWith(`--${key}=`)) return Number(arg.slice(key.length + 3));
  }
  return fallback;
}

/** A text option `--key value` or `--key=value`. */
export function textOption(args: readonly string[], key: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === `--${key}`) return args[i + 1];
    if (arg.startsWith(`--${key}=`)) return arg.slice(key.length + 3);
  }
  return undefined;
}

export function printTable(title: string, rows: [string, string, string][]): void {
  const w0 = Math.max(...rows.map((r) => r[0].length), 6);
  const w1 = Math.max(...rows.map((r) => r[1].length), 6);
  const lines = [`\n${title}`, `${'figure'.padEnd(w0)}  ${'value'.padEnd(w1)}  target`];
  for (const [k, v, t] of rows) lines.push(`${k.padEnd(w0)}  ${v.padEnd(w1)}  ${t}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Resident memory by kind from /proc (Linux): anonymous (heaps), file-backed (mapped files, code) and shared; zeros elsewhere. */
export function rssParts(): { rssAnon: number; rssFile: number; rssShmem: number } {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux.
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile'), rssShmem: kb('RssShmem') };
}

/** The process's memory after full collections (with --expose-gc, which npm run bench sets), so growth means retained memory. */
export async function settled(): Promise<NodeJS.MemoryUsage & ReturnType<typeof rssParts>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 200));
  gc?.();
  return { ...process.memoryUsage(), ...rssParts() };
}
export type SettledMemory = NodeJS.MemoryUsage & ReturnType<typeof rssParts>;
