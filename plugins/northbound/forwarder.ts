/**
 * One target's store-and-forward: the history is the queue. The forwarder
 * reads committed rows after its position in sequence order (row-source.ts),
 * turns each into its format's messages and publishes them in that order,
 * at most `maxInFlight` unacknowledged at a time. The cursor moves to a row
 * once the broker acknowledged it and every row before it (ack-window.ts),
 * and is kept in the database every second and at stop. When the
 * connection ends, whatever was not acknowledged is read and sent again
 * from the cursor on the next connection, after the session's births: so
 * the backlog goes out oldest first, each machine's rows in order, live
 * rows after it as they commit, and a subscriber that keeps the last `seq`
 * sees every row at least once. A message larger than the broker's maximum
 * packet size is skipped and counted, never retried; sequence numbers the
 * history no longer has (retention was faster than the outage) are counted
 * as lost and logged.
 *
 * Rows are read READ_ROWS at a time whenever the queue of messages not yet
 * handed to the broker is empty and there is room in flight, not only as
 * many as there is room for: a drained queue is refilled by one read while
 * the messages already in flight are acknowledged, instead of one small
 * read per acknowledgement, which kept a backlog's drain waiting on the
 * database. The queue holds at most one read's messages.
 */
import type { IClientPublishOptions, IConnackPacket, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { NorthboundTargetStatus } from '../../core/roles/gateway/northbound-status.js';
import { AckWindow, type WindowEntry } from './ack-window.js';
import { BrokerLink } from './broker-link.js';
import type { CursorStore, StoredPosition } from './cursor-store.js';
import type { OutMessage, TargetFormat } from './format.js';
import { OversizeLog, publishPacketBytes } from './packet-size.js';
import type { RowBatch, RowSource } from './row-source.js';
import type { TargetSettings } from './settings.js';

/** Rows read from the history at a time. */
const READ_ROWS = 500;
/** How often a moved cursor is written. */
const PERSIST_MS = 1000;
/** The MQTT maximum packet size, when neither the broker nor the target says less. */
const MQTT_MAX_PACKET = 268_435_455;
/** How long a clean stop waits for its farewell to be acknowledged. */
const FAREWELL_MS = 2000;

export interface ForwarderDeps {
  settings: TargetSettings;
  /** Makes the target's format, given where it keeps a Sparkplug bdSeq (with the cursor). */
  format(keepBdSeq: (bdSeq: number) => void): TargetFormat;
  source: RowSource;
  store: CursorStore;
  /** Where the target stands at start (stored, or where a new target starts). */
  position: StoredPosition;
  logger: Logger;
  now: () => number;
  /** Told the lag (seconds from a row's time to the broker's acknowledgement) of each live row. */
  observeLag?(seconds: number): void;
  /** Told when the cursor moved or the connection ended (the committed tail lets go of what the connected targets are past). */
  moved?(): void;
}

/** One accepted connection. */
interface Session {
  client: MqttClient;
  maxPacket: number;
  maxInFlight: number;
  protocolVersion: 4 | 5;
  /** Rows at or below this were committed before the session began: forwarded from the backlog. */
  historicalThrough: number;
  /** Births published: rows may follow. */
  ready: boolean;
}

interface Queued {
  message: OutMessage;
  entry: WindowEntry;
}

export class Forwarder {
  private readonly link: BrokerLink;
  private readonly format: TargetFormat;
  private readonly window = new AckWindow();
  private readonly oversizeLog: OversizeLog;
  private session: Session | undefined;
  private position: StoredPosition;
  /** The history position read up to (and queued); back to the cursor when a session ends. */
  private readPos: number;
  /** The highest position whose missing rows were counted, so a range read again is not counted twice. */
  private examinedThrough: number;
  private outbox: Queued[] = [];
  private outboxHead = 0;
  private inFlight = 0;
  private published = 0;
  private rebirthWanted = false;
  private pumping = false;
  private again = false;
  private dirty = false;
  private persistTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: ForwarderDeps) {
    this.position = { ...deps.position };
    this.readPos = this.position.cursor;
    this.examinedThrough = this.position.cursor;
    this.oversizeLog = new OversizeLog(deps.logger, deps.settings.name);
    const format = deps.format((bdSeq) => {
      this.position.bdSeq = bdSeq;
      this.dirty = true;
    });
    this.format = format;
    this.link = new BrokerLink(deps.settings, {
      will: () => format.will(),
      connected: (client, connack) => void this.begin(client, connack),
      lost: () => this.end(),
      message: (topic, payload) => {
        if (format.command(topic, payload)) {
          deps.logger.info(`northbound target '${deps.settings.name}': rebirth requested`);
          this.rebirthWanted = true;
          this.wake();
        }
      },
    }, deps.logger, deps.now);
  }

  get name(): string {
    return this.deps.settings.name;
  }

  /** The acknowledged position. */
  get cursor(): number {
    return this.position.cursor;
  }

  /** Whether a session with the broker runs. */
  get connected(): boolean {
    return this.session !== undefined;
  }

  /** Connects, unless the target is disabled. */
  start(): void {
    if (!this.deps.settings.enabled) return;
    this.link.start();
    this.persistTimer = setInterval(() => void this.persist(), PERSIST_MS);
    this.persistTimer.unref();
  }

  /** New rows may be committed, or room freed: publish what can be. */
  wake(): void {
    void this.pump();
  }

  /** A machine made inactive or deleted: its format's messages, now, when a session runs. */
  machineGone(machineID: string, deleted: boolean): void {
    const s = this.session;
    if (!s?.ready) return;
    const messages = this.format.machineGone(machineID, deleted);
    if (messages.length) this.queue(messages, this.window.add(this.readPos, messages.length));
    this.drain(s);
  }

  /** Says goodbye to the broker (a clean stop's farewell), closes, and keeps the cursor. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.persistTimer);
    const session = this.session;
    await this.link.stop(async (client) => {
      if (!session?.ready) return;
      const sent = Promise.all(this.format.farewell().map((m) => client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain })));
      await Promise.race([sent, new Promise((resolve) => setTimeout(resolve, FAREWELL_MS).unref())]);
    });
    this.session = undefined;
    await this.persist();
  }

  private async persist(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    await this.deps.store.write(this.name, this.position).catch((err: Error) => {
      this.dirty = true;
      this.deps.logger.error({ err: err.message }, `northbound target '${this.name}': its cursor could not be kept`);
    });
  }

  private async begin(client: MqttClient, connack: IConnackPacket): Promise<void> {
    const { settings, source } = this.deps;
    const format = this.format;
    const props = connack.properties;
    const session: Session = {
      client,
      maxPacket: Math.min(props?.maximumPacketSize ?? MQTT_MAX_PACKET, settings.maxPacketBytes ?? MQTT_MAX_PACKET),
      maxInFlight: Math.max(1, Math.min(settings.maxInFlight, props?.receiveMaximum ?? settings.maxInFlight)),
      protocolVersion: client.options.protocolVersion === 5 ? 5 : 4,
      historicalThrough: source.committedThrough,
      ready: false,
    };
    this.reset();
    this.session = session;
    this.deps.logger.info({ broker: settings.brokerUrl, cursor: this.position.cursor, backlogRows: session.historicalThrough - this.position.cursor }, `northbound target '${this.name}' connected`);
    for (const topic of format.subscriptions()) client.subscribe(topic, { qos: 1 });
    try {
      const births = await format.births(this.readPos);
      if (this.session !== session) return;
      if (births.length) this.queue(births, this.window.add(this.readPos, births.length));
      session.ready = true;
      this.wake();
    } catch (err) {
      this.fail(`the session's births could not be made: ${(err as Error).message}`, client);
    }
  }

  /** The connection ended: what was not acknowledged goes out again from the cursor. */
  private end(): void {
    this.session = undefined;
    this.reset();
    this.deps.moved?.();
  }

  private reset(): void {
    this.window.clear();
    this.outbox = [];
    this.outboxHead = 0;
    this.inFlight = 0;
    this.rebirthWanted = false;
    this.readPos = this.position.cursor;
    this.format.reset();
  }

  /** Something went wrong inside a session: noted, and the connection closed so that the link starts over with backoff. */
  private fail(message: string, client: MqttClient): void {
    this.link.noteError(message);
    this.deps.logger.error(`northbound target '${this.name}': ${message}; reconnecting`);
    client.end(true);
  }

  private queue(messages: readonly OutMessage[], entry: WindowEntry): void {
    for (const message of messages) this.outbox.push({ message, entry });
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        await this.fill();
      } while (this.again);
    } catch (err) {
      const client = this.session?.client;
      if (client) this.fail(`reading the history failed: ${(err as Error).message}`, client);
    } finally {
      this.pumping = false;
    }
  }

  /** Publishes what is queued, then reads and queues rows while there is room. */
  private async fill(): Promise<void> {
    for (;;) {
      const s = this.session;
      if (!s?.ready || this.stopped) return;
      this.drain(s);
      const room = s.maxInFlight - this.inFlight;
      if (this.outboxHead < this.outbox.length || room <= 0) return;
      if (this.rebirthWanted) {
        this.rebirthWanted = false;
        const births = await this.format.births(this.readPos);
        if (this.session !== s) return;
        this.queue(births, this.window.add(this.readPos, births.length));
        continue;
      }
      const batch = await this.deps.source.next(this.readPos, READ_ROWS);
      if (!batch || this.session !== s) return;
      await this.format.prepare(batch.rows);
      if (this.session !== s) return;
      this.take(batch, s);
    }
  }

  /** Queues a batch's messages, each row an entry of the window, in order. */
  private take(batch: RowBatch, s: Session): void {
    this.countMissing(batch);
    const { rows } = batch;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const historical = row.seq <= s.historicalThrough;
      const messages = this.format.messages(rows, i, historical);
      this.queue(messages, this.window.add(row.seq, messages.length, row.ts, historical));
    }
    const last = rows[rows.length - 1];
    if (!last || last.seq < batch.coveredThrough) this.window.add(batch.coveredThrough, 0);
    this.readPos = batch.coveredThrough;
    this.advance(this.window.takeDone());
  }

  /** Counts and logs the sequence numbers the history no longer has, each once. */
  private countMissing(batch: RowBatch): void {
    const from = Math.max(this.readPos, this.examinedThrough);
    if (batch.coveredThrough <= from) return;
    const lost = batch.coveredThrough - from - batch.rows.filter((r) => r.seq > from).length;
    this.examinedThrough = batch.coveredThrough;
    if (lost <= 0) return;
    this.position.lostRows += lost;
    this.dirty = true;
    const message = `${lost} row${lost === 1 ? '' : 's'} after seq ${from} were no longer in the history (retention deleted them before they were published, or the history never kept them)`;
    this.link.noteError(message);
    this.deps.logger.warn({ lost, afterSeq: from, lostRows: this.position.lostRows }, `northbound target '${this.name}': ${message}`);
  }

  /** Publishes from the outbox while fewer than the session's maximum are unacknowledged. */
  private drain(s: Session): void {
    const qos = this.deps.settings.qos;
    while (this.outboxHead < this.outbox.length && this.inFlight < s.maxInFlight && this.session === s) {
      const { message, entry } = this.outbox[this.outboxHead++]!;
      const bytes = publishPacketBytes(message, qos, s.protocolVersion);
      if (bytes > s.maxPacket) {
        this.position.oversizeRows++;
        this.dirty = true;
        this.link.noteError(this.oversizeLog.skipped(message.topic, bytes, s.maxPacket, this.position.oversizeRows));
        this.advance(this.window.acknowledge(entry));
        continue;
      }
      this.inFlight++;
      const options: IClientPublishOptions = { qos, retain: message.retain };
      s.client.publish(message.topic, message.payload, options, (err) => this.acknowledged(s, entry, err));
    }
    if (this.outboxHead === this.outbox.length) {
      this.outbox = [];
      this.outboxHead = 0;
    }
  }

  private acknowledged(s: Session, entry: WindowEntry, err: Error | undefined): void {
    if (this.session !== s) return;
    this.inFlight--;
    if (err) {
      // A connection that ended fails its messages too; the link starts over. A refusal on a live connection (an ACL, a quota) starts over as well, with backoff: nothing is skipped.
      if (s.client.connected) this.fail(`the broker refused a message: ${err.message}`, s.client);
      return;
    }
    this.published++;
    this.advance(this.window.acknowledge(entry));
    this.wake();
  }

  /** Moves the cursor over the entries now done, and observes the live rows' lag. */
  private advance(done: readonly WindowEntry[]): void {
    const last = done[done.length - 1];
    if (!last) return;
    const now = this.deps.now();
    if (this.deps.observeLag) for (const e of done) if (e.ts !== undefined && !e.historical) this.deps.observeLag((now - e.ts) / 1000);
    if (last.through > this.position.cursor) {
      this.position.cursor = last.through;
      this.dirty = true;
      this.deps.moved?.();
    }
  }

  async status(): Promise<NorthboundTargetStatus> {
    const { settings, source } = this.deps;
    const link = this.link.status();
    // One snapshot: the cursor may move while the oldest row's time is read.
    const committedThrough = source.committedThrough;
    const cursor = this.position.cursor;
    const backlogRows = Math.max(0, committedThrough - cursor);
    const oldest = backlogRows > 0 ? await source.firstTimeAfter(cursor) : undefined;
    return {
      name: settings.name,
      ...(settings.description !== undefined ? { description: settings.description } : {}),
      format: settings.format,
      brokerUrl: settings.brokerUrl,
      topicRoot: settings.topicRoot,
      ...(settings.format === 'sparkplug' ? { edgeNodeId: settings.edgeNodeId } : {}),
      enabled: settings.enabled,
      state: !settings.enabled ? 'disabled' : this.stopped ? 'stopped' : link.state,
      failedAttempts: link.failedAttempts,
      ...(link.nextAttemptAt !== undefined ? { nextAttemptAt: link.nextAttemptAt } : {}),
      cursor,
      committedThrough,
      backlogRows,
      backlogSeconds: oldest !== undefined ? Math.max(0, (this.deps.now() - oldest) / 1000) : 0,
      lostRows: this.position.lostRows,
      oversizeRows: this.position.oversizeRows,
      published: this.published,
      inFlight: this.inFlight,
      maxInFlight: this.session?.maxInFlight ?? settings.maxInFlight,
      ...(link.connectedAt !== undefined ? { connectedAt: link.connectedAt } : {}),
      ...(link.lastError !== undefined ? { lastError: link.lastError, lastErrorAt: link.lastErrorAt } : {}),
    };
  }
}
