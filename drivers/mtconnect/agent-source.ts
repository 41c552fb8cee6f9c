/**
 * An MTConnect agent as a source, read as the reference agent's own agent
 * adapter reads another agent: /probe for the device's data items, /current
 * for every current value, its CuttingTool assets, then /sample?from=<next>
 * (one streaming request, or polling) for each observation after that.
 *
 * After a loss it resumes with from=<the next sequence it has not seen>, so
 * nothing is missed or read twice while the agent kept it. It starts over:
 *  - from /probe when the agent's instanceId changed (it restarted and lost
 *    its buffer, and maybe its devices changed);
 *  - from /current when the agent answers OUT_OF_RANGE (the sequence wanted
 *    left the agent's buffer while the gateway was away).
 * Each of these goes through the machine actor as a connection loss whose
 * reason says what happened; nothing here retries on its own.
 */
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { GatewayError } from '../../core/interfaces/errors.js';
import { fetchDocument, openStream, withFallback, type FetchedDocument } from './agent-http.js';
import { AgentAssets } from './agent-assets.js';
import { DataItemIndex, type DataItem, type DeviceModel } from './device-model.js';
import { InputProblems, tooManyConditions } from './input-problems.js';
import { UNAVAILABLE, type ObservationStore } from './observations.js';
import type { AgentSettings } from './options.js';
import { parseProbeAnswer, pickDevice } from './probe.js';
import { rolesOf, type Roles } from './roles.js';
import { parseIsoTime } from './shdr-timestamp.js';
import type { MtconnectSource, SourceEvents } from './source.js';
import { judgeSample, type SampleOutcome } from './agent-sequence.js';
import { inSequenceOrder, parseStreams, type AgentError, type StreamObservation, type StreamsDocument } from './streams.js';
import { XmlProblem, type XmlLimits } from './xml-reader.js';

export interface AgentSourceSettings {
  /** The agent's base URL, without a trailing slash. */
  baseUrl: string;
  device: string | undefined;
  agent: AgentSettings;
  requestTimeoutMs: number;
  maxDocumentBytes: number;
  maxAssets: number;
  maxClockAheadMs: number;
  now: () => number;
}


export class AgentSource implements MtconnectSource {
  readonly problems: InputProblems;
  private model: DeviceModel | undefined;
  private index: DataItemIndex | undefined;
  private roles_: Roles | undefined;
  private instanceId: number | undefined;
  private modelChangedAt: string | undefined;
  /** The agent's device model changed since the probe: probe again before reading on, from the same sequence. */
  private modelStale = false;
  /** The first sequence number not yet read. */
  private next: number | undefined;
  private http: http.Agent;
  private stream: { close(): void } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private open_ = false;
  private closed = false;
  /** Bumped at every open and close, so late answers of an older session are ignored. */
  private session = 0;
  private readonly limits: XmlLimits;
  private readonly assets: AgentAssets;
  /** Told of every observation a /sample answer brings, with its sequence (tests check there is no gap or repeat). */
  onObservation: ((timestamp: number, receivedAt: number, sequence: number) => void) | undefined;

  constructor(
    private readonly settings: AgentSourceSettings,
    private readonly store: ObservationStore,
    private readonly events: SourceEvents,
    private readonly logger: Logger,
  ) {
    this.problems = new InputProblems(logger, () => this.where);
    this.http = this.newHttpAgent();
    this.limits = { maxChars: settings.maxDocumentBytes, maxDepth: 64, maxElements: 2_000_000, maxTextChars: 65_536 };
    this.assets = new AgentAssets(
      { get: (url) => this.get(url), url: (path, query) => this.url(path, query), describeErrors: (errors) => this.describeErrors(errors) },
      store, this.problems, { maxAssets: settings.maxAssets, limits: this.limits, now: settings.now },
    );
  }

  get where(): string {
    return `agent ${this.settings.baseUrl}${this.settings.device ? ` device '${this.settings.device}'` : ''}`;
  }

  get alive(): boolean {
    return this.open_ && !this.closed;
  }

  get roles(): Roles | undefined {
    return this.roles_;
  }

  present(item: DataItem): boolean {
    return this.index?.find(item.id) === item;
  }

  hasAssets(): boolean {
    return this.roles_?.assetChanged !== undefined || this.store.assetCount > 0;
  }

  /** The sequence and instance this source resumes from, for tests and logs. */
  get position(): { instanceId: number | undefined; next: number | undefined } {
    return { instanceId: this.instanceId, next: this.next };
  }

  async open(): Promise<void> {
    if (this.closed) throw new GatewayError('MACHINE_NOT_CONNECTED', 'mtconnect: client closed');
    this.stop();
    const session = ++this.session;
    if (this.model && this.modelStale) await this.probeAgain();
    if (this.model && this.instanceId !== undefined && this.next !== undefined) {
      const resumed = await this.sample(session);
      if (resumed.kind === 'ok') return this.opened('resumed', session);
      if (resumed.kind === 'failed') throw new GatewayError('MACHINE_NOT_CONNECTED', resumed.reason);
      this.logger.info({ source: this.where, reason: resumed.reason }, 'mtconnect: starting over');
      if (resumed.kind === 'restart') this.forget();
    }
    if (!this.model) await this.probe();
    await this.current();
    await this.assets.loadAll();
    const outcome = await this.sample(session);
    if (outcome.kind !== 'ok') {
      if (outcome.kind === 'restart') this.forget();
      throw new GatewayError(outcome.kind === 'failed' ? 'MACHINE_NOT_CONNECTED' : 'DRIVER_REQUEST_FAILED', outcome.reason);
    }
    this.opened('started', session);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.session++;
    this.stop();
    this.http.destroy();
  }

  private opened(how: string, session: number): void {
    if (session !== this.session) return;
    this.open_ = true;
    this.logger.info({ source: this.where, instanceId: this.instanceId, next: this.next }, `mtconnect: agent stream ${how}`);
  }

  private newHttpAgent(): http.Agent {
    const options = { keepAlive: true, maxSockets: 2 };
    return this.settings.baseUrl.startsWith('https:') ? new https.Agent(options) : new http.Agent(options);
  }

  /** Stops the stream or the polling; the HTTP sockets of a finished session go with it. */
  private stop(): void {
    this.open_ = false;
    this.stream?.close();
    this.stream = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.assets.stop();
  }

  /** The agent restarted: forget the device, the position and every value. */
  private forget(): void {
    this.model = undefined;
    this.index = undefined;
    this.roles_ = undefined;
    this.instanceId = undefined;
    this.modelChangedAt = undefined;
    this.modelStale = false;
    this.next = undefined;
    this.store.clear();
  }

  private lose(reason: string, session: number): void {
    if (session !== this.session || !this.open_) return;
    this.stop();
    this.logger.warn({ source: this.where, reason }, 'mtconnect: agent connection lost');
    this.events.lost(reason);
  }

  private url(path: string, query: Record<string, string | number> = {}): URL {
    const device = this.model?.name ?? this.settings.device;
    const url = new URL(`${this.settings.baseUrl}${device !== undefined && path !== 'asset' ? `/${encodeURIComponent(device)}` : ''}/${path}`);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, String(value));
    return url;
  }

  private async get(url: URL): Promise<FetchedDocument> {
    return fetchDocument(url, { timeoutMs: this.settings.requestTimeoutMs, maxBytes: this.settings.maxDocumentBytes }, this.http);
  }

  private fail(what: string, detail: string): GatewayError {
    return new GatewayError('DRIVER_REQUEST_FAILED', `mtconnect: ${this.where}: ${what}: ${detail}`);
  }

  private describeErrors(errors: readonly AgentError[]): string {
    return errors.map((e) => `${e.code}${e.message ? ` (${e.message.slice(0, 200)})` : ''}`).join('; ');
  }

  private async probe(): Promise<void> {
    const url = this.url('probe');
    const answer = await this.get(url);
    let model: DeviceModel;
    let instanceId: number | undefined;
    let modelChangedAt: string | undefined;
    try {
      const parsed = parseProbeAnswer(answer.text, this.limits);
      if (parsed.kind === 'error') {
        const hint = parsed.errors.some((e) => e.code === 'NO_DEVICE') ? '; check driverOptions.device' : '';
        throw this.fail('/probe', `${this.describeErrors(parsed.errors)}${hint}`);
      }
      model = pickDevice(parsed.devices, this.settings.device, `the agent's /probe`);
      instanceId = parsed.devices.instanceId;
      modelChangedAt = parsed.devices.deviceModelChangeTime;
    } catch (error) {
      if (error instanceof XmlProblem) throw this.fail('/probe', `HTTP ${answer.status}, ${error.message}`);
      throw error;
    }
    this.model = model;
    this.index = new DataItemIndex(model);
    this.roles_ = rolesOf(model);
    this.instanceId = instanceId;
    this.modelChangedAt = modelChangedAt;
  }

  /** The device model changed, the agent did not restart: the new model, and on from the same sequence (else from the start). */
  private async probeAgain(): Promise<void> {
    const { instanceId, next } = this;
    this.modelStale = false;
    await this.probe();
    if (this.instanceId !== instanceId) this.forget();
    else this.next = next;
  }

  private async current(): Promise<void> {
    const answer = await this.get(this.url('current'));
    const document = this.parse('/current', answer);
    if (document.kind === 'error') throw this.fail('/current', this.describeErrors(document.errors));
    if (this.instanceId !== undefined && document.header.instanceId !== this.instanceId) {
      const reason = `the agent's instanceId changed from ${this.instanceId} to ${document.header.instanceId} between /probe and /current`;
      this.forget();
      throw this.fail('/current', reason);
    }
    this.instanceId = document.header.instanceId;
    this.store.clear();
    for (const observation of inSequenceOrder(document.observations)) this.ingest(observation, false);
    this.next = document.header.nextSequence;
    this.events.changed();
  }

  private parse(what: string, answer: FetchedDocument): StreamsDocument {
    try {
      return parseStreams(answer.text, this.limits);
    } catch (error) {
      if (error instanceof XmlProblem) throw this.fail(what, `HTTP ${answer.status}, ${error.message}`);
      throw error;
    }
  }

  /** Starts sampling from `next`: resolves with the outcome of the first answer. */
  private async sample(session: number): Promise<SampleOutcome> {
    const { mode, count, intervalMs, heartbeatMs } = this.settings.agent;
    const from = this.next as number;
    if (mode === 'poll') {
      const answer = await this.get(this.url('sample', { from, count }));
      const outcome = this.applySample(this.parse('/sample', answer));
      if (outcome.kind === 'ok') this.schedulePoll(session, 0);
      return outcome;
    }
    let first: ((outcome: SampleOutcome) => void) | undefined;
    const firstAnswer = new Promise<SampleOutcome>((resolve) => {
      first = resolve;
    });
    const limits = { timeoutMs: this.settings.requestTimeoutMs, maxBytes: this.settings.maxDocumentBytes };
    const url = this.url('sample', { from, count, interval: intervalMs, heartbeat: heartbeatMs });
    const opened = await openStream(url, limits, {
      part: (text) => {
        const outcome = this.onPart(text, session);
        if (first) {
          first(outcome);
          first = undefined;
        } else if (outcome.kind !== 'ok') this.lose(outcome.reason, session);
      },
      end: (reason) => {
        if (first) first({ kind: 'failed', reason });
        else this.lose(reason, session);
      },
    }, this.http);
    if (opened.kind === 'document') {
      // An agent that answers the streaming request with one document does not stream: poll it instead.
      const outcome = this.applySample(this.parse('/sample', opened.document));
      if (outcome.kind === 'ok') this.schedulePoll(session, intervalMs);
      return outcome;
    }
    this.stream = opened;
    this.watch(session, 2 * heartbeatMs + this.settings.requestTimeoutMs);
    const outcome = await withFallback(firstAnswer, this.settings.requestTimeoutMs, () => ({
      kind: 'failed' as const,
      reason: `mtconnect: ${this.where} sent no document within ${this.settings.requestTimeoutMs} ms of opening the stream (driverOptions.requestTimeoutMs)`,
    }));
    first = undefined;
    if (outcome.kind !== 'ok') this.stop();
    return outcome;
  }

  private onPart(text: string, session: number): SampleOutcome {
    if (session !== this.session) return { kind: 'ok' };
    this.timer?.refresh();
    try {
      return this.applySample(parseStreams(text, this.limits));
    } catch (error) {
      return { kind: 'failed', reason: `mtconnect: ${this.where} sent a document that does not parse: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Applies a /sample answer: its new observations, or why sampling must start over. */
  private applySample(document: StreamsDocument): SampleOutcome {
    const judged = judgeSample(document, { instanceId: this.instanceId, next: this.next, modelChangedAt: this.modelChangedAt }, this.where, (errors) => this.describeErrors(errors));
    if (judged.kind === 'current') this.next = undefined;
    if (judged.kind === 'model') {
      this.modelStale = true;
      return { kind: 'failed', reason: judged.reason };
    }
    if (judged.kind !== 'ok') return judged;
    for (const observation of judged.observations) this.ingest(observation, true);
    this.next = judged.next;
    if (judged.observations.length > 0) this.events.changed();
    return { kind: 'ok' };
  }


  private watch(session: number, silenceMs: number): void {
    this.timer = setTimeout(() => {
      this.lose(`mtconnect: ${this.where} sent nothing for ${silenceMs} ms, though asked for a heartbeat every ${this.settings.agent.heartbeatMs} ms`, session);
    }, silenceMs);
  }

  private schedulePoll(session: number, delayMs: number): void {
    this.timer = setTimeout(() => void this.poll(session), delayMs);
  }

  private async poll(session: number): Promise<void> {
    if (session !== this.session) return;
    const { count, intervalMs } = this.settings.agent;
    try {
      const answer = await this.get(this.url('sample', { from: this.next ?? 0, count }));
      if (session !== this.session) return;
      const document = this.parse('/sample', answer);
      const outcome = this.applySample(document);
      if (outcome.kind !== 'ok') return this.lose(outcome.reason, session);
      // A full answer means more is waiting: ask again at once.
      const behind = document.kind === 'streams' && document.header.lastSequence >= (this.next ?? 0);
      this.schedulePoll(session, behind ? 0 : intervalMs);
    } catch (error) {
      this.lose(error instanceof GatewayError ? (error.detail ?? error.message) : String(error), session);
    }
  }

  private ingest(o: StreamObservation, live: boolean): void {
    const now = this.settings.now();
    let time = parseIsoTime(o.timestamp) ?? now;
    if (time - now > this.settings.maxClockAheadMs) {
      this.problems.report('futureTimestamp', `timestamp '${o.timestamp.slice(0, 40)}' of '${o.dataItemId.slice(0, 64)}' is ahead of the gateway's clock by more than driverOptions.maxClockAheadMs; the time it arrived is used`);
      time = now;
    }
    if (live) this.onObservation?.(time, now, o.sequence);
    const item = this.index?.find(o.dataItemId);
    if (!item) return this.problems.report('unknownDataItem', `data item '${o.dataItemId.slice(0, 64)}' is not in the device's /probe and is ignored`, o.dataItemId);
    if (o.condition) {
      if (!this.store.setCondition(item.id, { ...o.condition, ...(o.value ? { message: o.value } : {}) }, time)) this.problems.report('tooManyConditions', tooManyConditions(item));
      return;
    }
    const value = o.value.toUpperCase() === UNAVAILABLE ? UNAVAILABLE : o.value;
    this.store.setValue(item.id, value, time, now);
    if (!live || value === UNAVAILABLE) return;
    if (item.type === 'ASSET_CHANGED' && (o.assetType === undefined || o.assetType === 'CuttingTool')) this.assets.changed(value);
    else if (item.type === 'ASSET_REMOVED') this.store.removeAsset(value);
  }
}
