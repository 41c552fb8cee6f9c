/**
 * Northbound: the fleet's history published to the plant's MQTT brokers,
 * as Unified Namespace JSON (uns-format.ts) or Sparkplug B
 * (sparkplug-format.ts), one forwarder per target (forwarder.ts) that reads
 * the committed history from its persisted cursor, so an outage of the
 * broker, the network or the gateway loses nothing the history still holds.
 * Targets come from the `northbound` section (config.ts); their state is
 * the service `northbound` (gateway-info, the console) and /metrics.
 * docs/northbound.md.
 */
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { NorthboundStatus } from '../../core/roles/gateway/northbound-status.js';
import '../../core/roles/gateway/northbound-service.js';
import { CommittedTail } from './committed-tail.js';
import { checkNorthbound, NORTHBOUND_ENV, NORTHBOUND_FIELDS } from './config.js';
import { CURSOR_MIGRATIONS, CursorStore, type StoredPosition } from './cursor-store.js';
import { FleetView } from './fleet-view.js';
import type { TargetFormat } from './format.js';
import { Forwarder } from './forwarder.js';
import { northboundMetrics } from './metrics.js';
import { RowSource } from './row-source.js';
import { resolveTargets, type TargetSettings } from './settings.js';
import { SparkplugFormat } from './sparkplug-format.js';
import { UnsFormat } from './uns-format.js';

/** Committed rows kept in memory at most, for the connected targets that have still to publish them. */
const TAIL_ROWS = 50_000;

export const northboundPlugin = definePlugin<GatewayContext, typeof NORTHBOUND_FIELDS, true>({
  name: 'northbound',
  dependsOn: ['machine-actors'],
  migrations: CURSOR_MIGRATIONS,
  config: { section: 'northbound', fields: NORTHBOUND_FIELDS, optional: true, env: NORTHBOUND_ENV, check: checkNorthbound },
  async register(ctx) {
    const targets = resolveTargets(ctx.settings, ctx.identity.name, ctx.env);
    const forwarders: Forwarder[] = [];
    const status = async (): Promise<NorthboundStatus> => ({ targets: await Promise.all(forwarders.map((f) => f.status())) });
    ctx.services.provide('northbound', { status });
    const lagOf = northboundMetrics(ctx.metrics, status);
    if (targets.length === 0) return;

    const store = new CursorStore(ctx.db, ctx.now);
    // The tail keeps the rows the connected targets have still to publish; a target away reads the database when it is back.
    const moved = () => {
      let slowest = ctx.history.committedThrough;
      for (const f of forwarders) if (f.connected) slowest = Math.min(slowest, f.cursor);
      tail.release(slowest);
    };
    const { tail, stop: offCommit } = CommittedTail.follow(ctx.history, TAIL_ROWS, () => {
      moved();
      for (const f of forwarders) f.wake();
    });
    const source = new RowSource({ db: ctx.db, tail, committedThrough: () => ctx.history.committedThrough });
    const fleet = new FleetView(ctx.fleet);
    for (const settings of targets) {
      const position = await startingPosition(store, settings.name, () => store.startOfRun(ctx.startedAt, ctx.history.committedThrough));
      const format = (keepBdSeq: (bdSeq: number) => void) => formatOf(settings, { ctx, fleet, lastBdSeq: position.bdSeq, keepBdSeq });
      const forwarder = new Forwarder({ settings, format, source, store, position, logger: ctx.logger, now: ctx.now, observeLag: lagOf(settings.name), moved });
      forwarders.push(forwarder);
    }
    const offSaved = ctx.bus.on('machine.saved', ({ config }) => {
      if (!config.isActive) for (const f of forwarders) f.machineGone(config.machineID, false);
    });
    const offDeleted = ctx.bus.on('machine.deleted', ({ machineID }) => {
      for (const f of forwarders) f.machineGone(machineID, true);
    });
    for (const f of forwarders) f.start();
    ctx.logger.info({ targets: targets.map((t) => ({ name: t.name, format: t.format, brokerUrl: t.brokerUrl, enabled: t.enabled })) }, 'northbound targets started');
    return {
      async stop() {
        offCommit();
        offSaved();
        offDeleted();
        await Promise.all(forwarders.map((f) => f.stop()));
      },
    };
  },
});

/** A target's stored position; a target seen for the first time starts at `start()` and is stored at once, so a restart resumes from there. */
async function startingPosition(store: CursorStore, name: string, start: () => Promise<number>): Promise<StoredPosition> {
  const stored = await store.read(name);
  if (stored) return stored;
  const position = { cursor: await start(), lostRows: 0, oversizeRows: 0, bdSeq: -1 };
  await store.write(name, position);
  return position;
}

interface FormatDeps {
  ctx: GatewayContext;
  fleet: FleetView;
  lastBdSeq: number;
  keepBdSeq(bdSeq: number): void;
}

function formatOf(settings: TargetSettings, { ctx, fleet, lastBdSeq, keepBdSeq }: FormatDeps): TargetFormat {
  const common = { version: ctx.version, fleet, db: ctx.db, now: ctx.now };
  if (settings.format === 'sparkplug') return new SparkplugFormat({ ...common, groupId: settings.topicRoot, edgeNodeId: settings.edgeNodeId, lastBdSeq, keepBdSeq });
  return new UnsFormat({ ...common, root: settings.topicRoot, gatewayName: ctx.identity.name });
}
