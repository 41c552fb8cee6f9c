/**
 * The agent: answers probe, current, sample and asset requests as MTConnect
 * documents in XML or JSON, from the device model (rebuilt when the fleet's
 * machines change), the live state and the history. Requests arrive from
 * server.ts already routed; each answer is a status, a content type and a
 * body.
 */
import { AgentError, quoted } from './agent-error.js';
import { CurrentStreams } from './current-streams.js';
import { assetsJson, devicesJson, errorJson, streamsJson, streamsJsonOfParts } from './documents-json.js';
import { assetsXml, devicesXml, errorXml, streamsXml, streamsXmlOfParts } from './documents-xml.js';
import type { Chunks, HeaderFacts } from './documents.js';
import type { GatewayReader } from './gateway-reader.js';
import type { LiveState } from './live-state.js';
import { buildModel, dataItemIdsUnder, findDevice, type ComponentDef, type DeviceModel } from './model.js';
import { selectDataItems } from './path-filter.js';
import { filterKeyOf, ReplayCheckpoints } from './replay-checkpoints.js';
import type { Served } from './served.js';
import { SharedReads } from './shared-reads.js';
import { agentAvailability, currentAt, currentNow, sample, sequenceHeader, type SequenceHeader } from './stream-reads.js';
import { toolAssets } from './tool-assets.js';

export type Format = 'xml' | 'json';

export interface Answer {
  status: number;
  contentType: string;
  /** The document: text, or its UTF-8 chunks where it was put together from parts (documents.ts, framed). */
  body: string | Chunks;
}

/** The content type of each format, as cppagent sends them. */
export const CONTENT_TYPES: Record<Format, string> = { xml: 'text/xml', json: 'application/json' };

/** A /sample answer, with the header it was read with and whether it reached the head. */
export interface SampleAnswer {
  answer: Answer;
  header: SequenceHeader;
  caughtUp: boolean;
}

/** How many different stream chunks are shared at a time (streams with other filters or places read alone). */
const SHARED_CHUNKS = 16;

export interface AgentOptions {
  version: string;
  sender: string;
  instanceId: number;
  /** The gateway's stable id: the Agent device's uuid and the first part of every machine's. */
  gatewayId: string;
  startedAt: number;
}

export class Agent {
  private modelCache: { revision: number; layouts: number; model: DeviceModel; changedAt: number } | undefined;
  private readonly currentStreams: CurrentStreams;
  /** Where forward /sample pages (and streams) left off, so the next one goes on from there. */
  private readonly checkpoints = new ReplayCheckpoints();
  /** Stream chunks being read or read up to the live state's head, shared by the streams asking the same. */
  private readonly sharedChunks = new SharedReads<SampleAnswer>(SHARED_CHUNKS);
  /** The key of each stream's filter, made once per filter. */
  private readonly filterKeys = new WeakMap<Set<string>, string>();

  constructor(
    readonly reader: GatewayReader,
    readonly live: LiveState,
    private readonly options: AgentOptions,
  ) {
    this.currentStreams = new CurrentStreams(live);
  }

  /** The device model of the machines as configured now, with the motion items their drivers read. */
  model(): DeviceModel {
    const revision = this.reader.machinesRevision;
    const layouts = this.live.layoutRevision;
    if (this.modelCache?.revision !== revision || this.modelCache.layouts !== layouts) {
      const { gatewayId } = this.options;
      const model = buildModel(this.reader.machines(), gatewayId, (machineID) => `${gatewayId}:${machineID}`, (machineID) => this.live.replay(machineID).motion.layout());
      this.modelCache = { revision, layouts, model, changedAt: this.modelCache ? this.reader.now() : this.options.startedAt };
    }
    return this.modelCache.model;
  }

  private facts(): HeaderFacts {
    this.model();
    return { instanceId: this.options.instanceId, version: this.options.version, sender: this.options.sender, deviceModelChangeTime: this.modelCache!.changedAt };
  }

  /** The device a request names, or NO_DEVICE (404). */
  device(name: string): ComponentDef {
    const device = findDevice(this.model(), name);
    if (!device) throw new AgentError('NoDevice', `Could not find the device '${quoted(name)}'`);
    return device;
  }

  /** The data items a request selects: the device's, the path's, the device type's, or all (undefined). */
  filter(device: ComponentDef | undefined, path: string | undefined, deviceType?: 'Device' | 'Agent'): Set<string> | undefined {
    const model = this.model();
    let ids: Set<string> | undefined = device ? dataItemIdsUnder(device) : undefined;
    if (deviceType) {
      const ofType = new Set<string>();
      for (const d of model.devices) if (d.element === deviceType) dataItemIdsUnder(d, ofType);
      ids = ids ? new Set([...ids].filter((id) => ofType.has(id))) : ofType;
    }
    if (path !== undefined) {
      const selected = selectDataItems(path, model);
      ids = ids ? new Set([...selected].filter((id) => ids!.has(id))) : selected;
      if (ids.size === 0) throw new AgentError('InvalidXPath', `The path selects no data item of the device: ${quoted(path)}`);
    }
    return ids;
  }

  /** The header's sequence numbers now. */
  header(): Promise<SequenceHeader> {
    return sequenceHeader(this.reader, this.live);
  }

  /** Stops the work the agent does between requests. */
  close(): void {
    this.currentStreams.close();
  }

  /** /probe. */
  async probe(format: Format, device: ComponentDef | undefined, deviceType: 'Device' | 'Agent' | undefined): Promise<Answer> {
    const model = this.model();
    const devices = device ? [device] : deviceType ? model.devices.filter((d) => d.element === deviceType) : model.devices;
    const header = await this.header();
    const assetCount = toolAssets(this.reader, model).length;
    const counts = { bufferSize: header.bufferSize, assetBufferSize: Math.max(1, assetCount), assetCount };
    const now = this.reader.now();
    const body = format === 'json' ? devicesJson(this.facts(), now, counts, devices) : devicesXml(this.facts(), now, counts, devices);
    return { status: 200, contentType: CONTENT_TYPES[format], body };
  }

  /** A Streams document of `observations` with `header`. */
  streams(format: Format, header: SequenceHeader, observations: Served[]): Chunks {
    const now = this.reader.now();
    return format === 'json' ? streamsJson(this.facts(), now, header, observations) : streamsXml(this.facts(), now, header, observations);
  }

  /** /current, now or at a sequence number. */
  async current(format: Format, filter: Set<string> | undefined, at: number | undefined): Promise<Answer> {
    const model = this.model();
    const header = await this.header();
    const agent = agentAvailability(model, this.options.startedAt);
    if (at === undefined && filter === undefined) {
      // Every device: from the parts kept per device, written synchronously after the header (see sequenceHeader).
      const parts = this.currentStreams.deviceStreams(format, model, agent);
      const now = this.reader.now();
      const body = format === 'json' ? streamsJsonOfParts(this.facts(), now, header, parts) : streamsXmlOfParts(this.facts(), now, header, parts);
      return { status: 200, contentType: CONTENT_TYPES[format], body };
    }
    const observations = at === undefined ? currentNow(model, this.live, filter, agent) : await currentAt(this.reader, model, header, at, filter, agent);
    return { status: 200, contentType: CONTENT_TYPES[format], body: this.streams(format, header, observations) };
  }

  /** /sample (one answer). */
  async sample(format: Format, request: { from?: number | undefined; to?: number | undefined; count: number; filter?: Set<string> | undefined }): Promise<SampleAnswer> {
    const through = this.live.through;
    const header = await this.header();
    const result = await sample(this.reader, this.model(), header, request, through, this.checkpoints);
    const body = this.streams(format, result.header, result.observations);
    return { answer: { status: 200, contentType: CONTENT_TYPES[format], body }, header: result.header, caughtUp: result.header.nextSequence >= header.nextSequence };
  }

  /** A sample stream's next chunk: the same bytes for every stream asking the same thing up to the same head. */
  streamChunk(format: Format, request: { from?: number | undefined; count: number; filter?: Set<string> | undefined }): Promise<SampleAnswer> {
    const key = `${format} ${request.count} ${request.from ?? 'first'} ${this.filterKey(request.filter)}`;
    return this.sharedChunks.get(key, this.live.through, () => this.sample(format, request));
  }

  private filterKey(filter: Set<string> | undefined): string {
    if (!filter) return filterKeyOf(filter);
    let key = this.filterKeys.get(filter);
    if (key === undefined) {
      key = filterKeyOf(filter);
      this.filterKeys.set(filter, key);
    }
    return key;
  }

  /** /assets: up to `count` tool assets, of one device when given. */
  assets(format: Format, params: { count: number; type?: string | undefined; removed: boolean; device?: ComponentDef | undefined }): Answer {
    const model = this.model();
    const all = toolAssets(this.reader, model);
    const ofDevice = params.device ? all.filter((a) => a.deviceUuid === params.device!.uuid) : all;
    const selected = (params.type === undefined || params.type === 'CuttingTool' ? ofDevice : []).slice(0, params.count);
    return this.assetsAnswer(format, selected, all.length);
  }

  /** /asset/{ids}: the assets named (`;`-separated); ASSET_NOT_FOUND (404) when none is there. */
  assetsById(format: Format, ids: readonly string[]): Answer {
    const all = toolAssets(this.reader, this.model());
    const found = ids.flatMap((id) => all.filter((a) => a.assetId === id));
    if (found.length === 0) throw new AgentError('AssetNotFound', `Cannot find asset: ${quoted(ids.join(';'))}`, undefined, ids[0] ?? '');
    return this.assetsAnswer(format, found, all.length);
  }

  private assetsAnswer(format: Format, assets: Parameters<typeof assetsXml>[3], assetCount: number): Answer {
    const counts = { assetBufferSize: Math.max(1, assetCount), assetCount };
    const now = this.reader.now();
    const body = format === 'json' ? assetsJson(this.facts(), now, counts, assets) : assetsXml(this.facts(), now, counts, assets);
    return { status: 200, contentType: CONTENT_TYPES[format], body };
  }

  /** The MTConnectError document of `error` for the request `uri` of a document `request` (MTConnectStreams, …). */
  async errorAnswer(format: Format, error: AgentError, uri: string, request: string): Promise<Answer> {
    const header = await this.header().catch(() => ({ bufferSize: 1 }));
    const now = this.reader.now();
    const body = format === 'json' ? errorJson(this.facts(), now, header.bufferSize, error, uri, request) : errorXml(this.facts(), now, header.bufferSize, error, uri, request);
    return { status: error.status, contentType: CONTENT_TYPES[format], body };
  }
}
