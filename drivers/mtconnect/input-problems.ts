/**
 * Bad input that is skipped while the stream goes on (a line with too many
 * fields, an unknown data item, a timestamp in the future, a line that is
 * not SHDR, an asset that does not parse): counted by kind, the latest one
 * kept, and logged with the machine once per kind per connection (once per
 * name for unknown data items, up to a bound), so a chatty peer cannot fill
 * the log. Input that breaks the stream drops the connection instead, and
 * the machine's connection error says why.
 */
import type { Logger } from 'pino';
import type { DataItem } from './device-model.js';

/** Names of unknown data items logged per connection; the rest are counted only. */
const MAX_LOGGED_KEYS = 20;

export interface ProblemCount {
  count: number;
  /** The latest problem of this kind, for a person. */
  last: string;
}

export class InputProblems {
  private readonly counts = new Map<string, ProblemCount>();
  private readonly logged = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly where: () => string,
  ) {}

  /** A new connection: each kind is logged again the first time it happens. */
  connectionOpened(): void {
    this.logged.clear();
  }

  report(kind: string, detail: string, key?: string): void {
    const entry = this.counts.get(kind) ?? { count: 0, last: '' };
    entry.count++;
    entry.last = detail;
    this.counts.set(kind, entry);
    const logKey = key === undefined ? kind : `${kind}:${key}`;
    if (this.logged.has(logKey) || (key !== undefined && this.logged.size >= MAX_LOGGED_KEYS)) return;
    this.logged.add(logKey);
    this.logger.warn({ kind, source: this.where() }, `mtconnect: ${detail} (logged once per connection)`);
  }

  /** Every kind seen so far with its count and latest detail. */
  snapshot(): Record<string, ProblemCount> {
    return Object.fromEntries([...this.counts].map(([kind, c]) => [kind, { ...c }]));
  }
}

/** What a refused condition entry is reported as. */
export const tooManyConditions = (item: DataItem): string =>
  `a new entry of condition '${(item.name ?? item.id).slice(0, 64)}' was not kept: it holds the most active entries it keeps`;
