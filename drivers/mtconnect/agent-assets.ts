/**
 * An agent's CuttingTool assets for one device: all of them when the
 * stream starts, then each one again when an ASSET_CHANGED observation names
 * it, one request at a time. A failure is reported as bad input and the
 * stream goes on: tool life is not worth dropping the machine's link.
 */
import type { FetchedDocument } from './agent-http.js';
import { parseAssets } from './assets.js';
import type { InputProblems } from './input-problems.js';
import type { ObservationStore } from './observations.js';
import type { AgentError } from './streams.js';
import type { XmlLimits } from './xml-reader.js';

/** Asset ids waiting to be fetched after ASSET_CHANGED; more are dropped until the queue drains. */
const MAX_PENDING_ASSETS = 100;

/** What the assets need of their source: its requests and how it names an agent's errors. */
export interface AssetRequests {
  get(url: URL): Promise<FetchedDocument>;
  url(path: string, query?: Record<string, string | number>): URL;
  describeErrors(errors: readonly AgentError[]): string;
}

const firstOf = (set: ReadonlySet<string>): string | undefined => set.values().next().value;

export class AgentAssets {
  private readonly pending = new Set<string>();
  private fetching = false;
  /** Bumped by stop(), so an answer of a stopped session is dropped. */
  private generation = 0;

  constructor(
    private readonly requests: AssetRequests,
    private readonly store: ObservationStore,
    private readonly problems: InputProblems,
    private readonly settings: { maxAssets: number; limits: XmlLimits; now: () => number },
  ) {}

  /** Every CuttingTool asset of the device, at the start of a stream. */
  async loadAll(): Promise<void> {
    if (this.settings.maxAssets === 0) return;
    try {
      const answer = await this.requests.get(this.requests.url('assets', { type: 'CuttingTool', count: this.settings.maxAssets }));
      const parsed = parseAssets(answer.text, this.settings.limits);
      if (parsed.kind === 'error') return this.problems.report('assets', `/assets answered ${this.requests.describeErrors(parsed.errors)}`);
      for (const asset of parsed.assets) this.store.putAsset(asset, this.settings.now());
    } catch (error) {
      this.problems.report('assets', `/assets could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** An ASSET_CHANGED observation named `assetId`: fetch it again. */
  changed(assetId: string): void {
    if (this.settings.maxAssets === 0 || this.pending.size >= MAX_PENDING_ASSETS) return;
    this.pending.add(assetId);
    if (!this.fetching) void this.fetch(this.generation);
  }

  /** Drops what is waiting; an answer on its way is not stored. */
  stop(): void {
    this.pending.clear();
    this.generation++;
  }

  private async fetch(generation: number): Promise<void> {
    this.fetching = true;
    try {
      for (let id = firstOf(this.pending); id !== undefined && generation === this.generation; id = firstOf(this.pending)) {
        this.pending.delete(id);
        try {
          const parsed = parseAssets((await this.requests.get(this.requests.url(`asset/${encodeURIComponent(id)}`))).text, this.settings.limits);
          if (generation !== this.generation) return;
          if (parsed.kind === 'assets') for (const asset of parsed.assets) this.store.putAsset(asset, this.settings.now());
          else this.problems.report('assets', `/asset/${id.slice(0, 64)} answered ${this.requests.describeErrors(parsed.errors)}`);
        } catch (error) {
          this.problems.report('assets', `/asset/${id.slice(0, 64)} could not be read: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    } finally {
      this.fetching = false;
    }
  }
}
