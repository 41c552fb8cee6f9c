/**
 * Keeps the service's fleet in step with its gateways without anyone asking:
 * the gateway in this process is synced as soon as its machines or groups
 * change (its link's `watchFleet`), each remote gateway every
 * `programs.gatewaySync.intervalSec` seconds. One sync of a gateway runs at
 * a time; a change heard during a sync starts one more after it. A failure
 * is recorded on the gateway (lastError, reachable) by the link's call and
 * logged, never thrown. docs/programs-fleet.md, "Keeping in step".
 */
import type { Logger } from 'pino';
import type { FleetDeps } from './operations/deps.js';
import { syncGateway } from './sync.js';

/** How long the local gateway's changes are gathered before one sync (a machine deleted from groups emits several events). */
const LOCAL_SETTLE_MS = 50;

export class FleetKeeper {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private localTimer: NodeJS.Timeout | undefined;
  private intervalTimer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly d: FleetDeps,
    private readonly logger: Logger,
  ) {}

  /** Watches the local gateway (when `localId` is given) and starts the remote interval (0: off). */
  start(localId: string | undefined, intervalSec: number): void {
    const link = this.d.ctx.localGateway;
    if (localId && link?.watchFleet) {
      this.unwatch = link.watchFleet(() => {
        if (this.stopped || this.localTimer) return;
        this.localTimer = setTimeout(() => {
          this.localTimer = undefined;
          void this.sync(localId);
        }, LOCAL_SETTLE_MS);
      });
    }
    if (intervalSec > 0) {
      this.intervalTimer = setInterval(() => void this.syncRemotes(), intervalSec * 1000);
      this.intervalTimer.unref();
    }
  }

  /** Syncs every remote gateway, one after another. */
  async syncRemotes(): Promise<void> {
    for (const g of await this.d.repo.listGateways(10_000, null)) {
      if (this.stopped) return;
      if (g.kind === 'http') await this.sync(g.id);
    }
  }

  /** Syncs one gateway as the service itself; waits for a sync under way and runs once more after it. */
  sync(id: string): Promise<void> {
    const current = this.running.get(id);
    if (current) {
      this.again.add(id);
      return current;
    }
    const run = (async () => {
      do {
        this.again.delete(id);
        const g = await this.d.repo.gateway(id);
        if (!g || this.stopped) return;
        try {
          const report = await syncGateway(this.d, g, null);
          const m = report.machines;
          if (m.added.count + m.changed.length + m.gone.count + m.returned.count > 0) {
            this.logger.info({ gateway: g.name, added: m.added.count, changed: m.changed.length, gone: m.gone.count, returned: m.returned.count }, 'gateway synced');
          }
        } catch (err) {
          this.logger.warn({ gateway: g.name, err: (err as Error).message }, 'gateway not synced');
        }
      } while (this.again.has(id) && !this.stopped);
    })().finally(() => this.running.delete(id));
    this.running.set(id, run);
    return run;
  }

  /** Stops listening and the interval, and waits for the syncs under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    clearTimeout(this.localTimer);
    clearInterval(this.intervalTimer);
    await Promise.all(this.running.values());
  }
}
