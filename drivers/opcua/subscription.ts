/**
 * The status values kept current by one OPC UA subscription (monitored
 * items). A value is served from here only while the subscription is alive
 * (a publish or keep-alive arrived recently) and its last notification was
 * Good; otherwise the client polls with the Read service.
 */
import type { ClientSubscription, DataValue } from 'node-opcua';
import type { Logger } from 'pino';
import type { OpcuaLink } from './connection.js';

/** Keep-alive publishes the server sends after this many empty publishing intervals. */
const KEEP_ALIVE_COUNT = 4;

export class StatusSubscription {
  /** Set once the subscription needs replacing: a Bad value, a bad subscription status, or termination. */
  broken = false;
  notifications = 0;
  private readonly values = new Map<string, DataValue>();
  private lastHeardAt: number;
  private subscription: ClientSubscription | undefined;

  /** Longest silence of a live subscription, from the revised publishing interval and keep-alive count. */
  private silenceLimitMs: number;

  private constructor(
    publishingIntervalMs: number,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {
    this.lastHeardAt = now();
    this.silenceLimitMs = publishingIntervalMs * KEEP_ALIVE_COUNT * 2 + 500;
  }

  /** Creates the subscription and its monitored items; resolves once the server has accepted them. */
  static async create(link: OpcuaLink, nodeIds: readonly string[], publishingIntervalMs: number, now: () => number, logger: Logger): Promise<StatusSubscription> {
    const watched = new StatusSubscription(publishingIntervalMs, now, logger);
    const { AttributeIds, TimestampsToReturn } = link.opcua;
    const subscription = await link.request('create subscription', (session) =>
      session.createSubscription2({
        requestedPublishingInterval: publishingIntervalMs,
        requestedMaxKeepAliveCount: KEEP_ALIVE_COUNT,
        requestedLifetimeCount: KEEP_ALIVE_COUNT * 6,
        maxNotificationsPerPublish: 0,
        publishingEnabled: true,
        priority: 1,
      }),
    );
    watched.subscription = subscription;
    // Two missed keep-alives mean the subscription is not alive.
    watched.silenceLimitMs = subscription.publishingInterval * Math.max(1, subscription.maxKeepAliveCount) * 2 + 500;
    const heard = () => {
      watched.lastHeardAt = now();
    };
    subscription.on('keepalive', heard);
    subscription.on('terminated', () => watched.markBroken('subscription terminated'));
    subscription.on('internal_error', (error: Error) => watched.markBroken(`subscription error: ${error.message}`));
    subscription.on('status_changed', (status) => {
      if (!status.isGood()) watched.markBroken(`subscription status ${status.name}`);
    });
    const group = await link.request('create monitored items', () =>
      subscription.monitorItems(
        nodeIds.map((nodeId) => ({ nodeId, attributeId: AttributeIds.Value })),
        { samplingInterval: publishingIntervalMs, discardOldest: true, queueSize: 1 },
        TimestampsToReturn.Both,
      ),
    );
    // The first publish carries every item's current value; until then reads would have to poll.
    let firstData: () => void = () => undefined;
    const initial = new Promise<void>((resolve) => {
      firstData = resolve;
    });
    group.on('changed', (_item, dataValue, index) => {
      firstData();
      heard();
      watched.notifications += 1;
      const nodeId = nodeIds[index];
      if (nodeId === undefined) return;
      watched.values.set(nodeId, dataValue);
      if (!dataValue.statusCode.isGood()) watched.markBroken(`monitored item ${nodeId} reported ${dataValue.statusCode.name}`);
    });
    await link.request('wait for the first publish', () => initial).catch(() => undefined);
    return watched;
  }

  /** The current values of `nodeIds`, or undefined when any is missing, Bad, or the subscription is not alive. */
  snapshot(nodeIds: readonly string[]): DataValue[] | undefined {
    if (!this.alive()) return undefined;
    const out: DataValue[] = [];
    for (const nodeId of nodeIds) {
      const value = this.values.get(nodeId);
      if (!value || !value.statusCode.isGood()) return undefined;
      out.push(value);
    }
    return out;
  }

  alive(): boolean {
    return !this.broken && this.now() - this.lastHeardAt <= this.silenceLimitMs;
  }

  /** Deletes the subscription on the server; bounded by the link's request timeout, never throws. */
  async terminate(link: OpcuaLink): Promise<void> {
    this.broken = true;
    const subscription = this.subscription;
    this.subscription = undefined;
    if (!subscription || link.dead) return;
    await link.request('delete subscription', () => subscription.terminate()).catch(() => undefined);
  }

  private markBroken(reason: string): void {
    if (this.broken) return;
    this.broken = true;
    this.logger.warn({ reason }, 'opcua subscription needs recreating; polling meanwhile');
  }
}
