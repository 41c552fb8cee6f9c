/**
 * The same documents in cppagent's JSON version 2 form (sent for `Accept:
 * application/json`): the root object's key is the document's name, with
 * `jsonVersion` 2 and `schemaVersion`; entities of one kind are grouped
 * under their name in arrays (`"DeviceStream": [ … ]`, `"Events":
 * {"Execution": [ … ]}`, `"Errors": {"OutOfRange": [ … ]}`); an
 * observation's value is `value`; an empty Streams is `{}`.
 */
import type { AgentError } from './agent-error.js';
import { creationTime, elementName, framed, isoTime, runs, SCHEMA_VERSION, sortForPrinting, type Chunks, type DocumentFrame, type HeaderFacts, type ToolAsset } from './documents.js';
import type { ComponentDef, DataItemDef } from './model.js';
import type { Served } from './served.js';
import type { SequenceHeader } from './stream-reads.js';

type Json = Record<string, unknown>;

function header(facts: HeaderFacts, now: number, extra: Record<string, number>): Json {
  return {
    version: facts.version,
    creationTime: creationTime(now),
    testIndicator: false,
    instanceId: facts.instanceId,
    sender: facts.sender,
    schemaVersion: SCHEMA_VERSION,
    deviceModelChangeTime: isoTime(facts.deviceModelChangeTime),
    ...extra,
  };
}

function document(name: string, body: Json): string {
  return JSON.stringify({ [name]: { jsonVersion: 2, schemaVersion: SCHEMA_VERSION, ...body } });
}

function grouped<T>(items: readonly T[], name: (item: T) => string, node: (item: T) => Json): Record<string, Json[]> {
  const out: Record<string, Json[]> = {};
  for (const item of items) (out[name(item)] ??= []).push(node(item));
  return out;
}

function dataItemJson(d: DataItemDef): Json {
  const node: Json = { category: d.category, id: d.id, name: d.name, type: d.type };
  if (d.subType !== undefined) node.subType = d.subType;
  if (d.units !== undefined) node.units = d.units;
  if (d.nativeUnits !== undefined) node.nativeUnits = d.nativeUnits;
  return node;
}

function componentJson(c: ComponentDef): Json {
  const node: Json = { id: c.id };
  if (c.name !== undefined) node.name = c.name;
  if (c.uuid !== undefined) node.uuid = c.uuid;
  if (c.element === 'Agent' || c.element === 'Device') node.mtconnectVersion = SCHEMA_VERSION;
  if (c.description !== undefined) node.Description = { value: c.description };
  if (c.dataItems.length) node.DataItems = { DataItem: c.dataItems.map(dataItemJson) };
  if (c.components.length) node.Components = grouped(c.components, (x) => x.element, componentJson);
  return node;
}

/** The probe in JSON. */
export function devicesJson(facts: HeaderFacts, now: number, counts: { bufferSize: number; assetBufferSize: number; assetCount: number }, devices: readonly ComponentDef[]): string {
  return document('MTConnectDevices', { Header: header(facts, now, counts), Devices: grouped(devices, (d) => d.element, componentJson) });
}

function observationJson(s: Served): Json {
  const { o, def } = s;
  const node: Json = { dataItemId: def.id, name: def.name, sequence: o.seq, timestamp: isoTime(o.ts) };
  if (def.category === 'CONDITION') node.type = def.type;
  if (o.nativeCode !== undefined && (o.level === 'Fault' || o.level === 'Warning')) node.conditionId = o.nativeCode;
  if (o.nativeCode !== undefined) node.nativeCode = o.nativeCode;
  if (o.nativeSeverity !== undefined) node.nativeSeverity = o.nativeSeverity;
  if (def.category !== 'CONDITION' || o.value !== '') node.value = o.value;
  return node;
}

const CATEGORY_KEY = { SAMPLE: 'Samples', EVENT: 'Events', CONDITION: 'Condition' } as const;

function componentStreamJson(observations: Served[]): Json {
  const c = observations[0]!.def.parent;
  const node: Json = { component: c.element, componentId: c.id };
  if (c.name !== undefined) node.name = c.name;
  for (const category of runs(observations, (s) => s.def.category)) node[CATEGORY_KEY[category[0]!.def.category]] = grouped(category, elementName, observationJson);
  return node;
}

/** One device's DeviceStream object in JSON, of its observations in printing order (sortForPrinting). */
export function deviceStreamJson(byDevice: readonly Served[]): string {
  const d = byDevice[0]!.def.parent.device;
  return JSON.stringify({ name: d.name ?? '', uuid: d.uuid ?? '', ComponentStream: runs(byDevice, (s) => s.def.parent).map(componentStreamJson) });
}

/** Stands for the DeviceStream objects in the document written around them (a JSON string, so never part of another). */
const STREAMS_MARK = JSON.stringify('DEVICE-STREAMS-GO-HERE');

/** The text of a Streams document in JSON before and after its DeviceStream objects (none when `empty`), which a comma separates. */
function streamsJsonFrame(facts: HeaderFacts, now: number, seq: SequenceHeader, empty: boolean): DocumentFrame {
  const counts = { bufferSize: seq.bufferSize, nextSequence: seq.nextSequence, lastSequence: seq.lastSequence, firstSequence: seq.firstSequence };
  const whole = document('MTConnectStreams', { Header: header(facts, now, counts), Streams: empty ? {} : { DeviceStream: [JSON.parse(STREAMS_MARK) as string] } });
  if (empty) return { head: whole, tail: '' };
  const at = whole.lastIndexOf(STREAMS_MARK);
  return { head: whole.slice(0, at), tail: whole.slice(at + STREAMS_MARK.length) };
}

const COMMA = Buffer.from(',');

/** A Streams document in JSON, as UTF-8 chunks (documents.ts, framed). */
export function streamsJson(facts: HeaderFacts, now: number, seq: SequenceHeader, observations: Served[]): Chunks {
  sortForPrinting(observations);
  const parts = runs(observations, (s) => s.def.parent.device).map((byDevice) => Buffer.from(deviceStreamJson(byDevice)));
  return framed(streamsJsonFrame(facts, now, seq, parts.length === 0), parts, COMMA);
}

/** The Streams document in JSON of DeviceStream objects kept (deviceStreamJson), in document order. */
export function streamsJsonOfParts(facts: HeaderFacts, now: number, seq: SequenceHeader, parts: readonly Buffer[]): Chunks {
  return framed(streamsJsonFrame(facts, now, seq, parts.length === 0), parts, COMMA);
}

function assetJson(a: ToolAsset): Json {
  return {
    assetId: a.assetId,
    deviceUuid: a.deviceUuid,
    timestamp: isoTime(a.timestamp),
    toolId: a.toolId,
    CuttingToolLifeCycle: {
      CutterStatus: { Status: [a.status] },
      ToolLife: [{ type: a.lifeType, countDirection: 'UP', limit: a.limit, value: a.used }],
      ProgramToolGroup: String(a.group),
      ProgramToolNumber: String(a.toolNumber),
    },
  };
}

/** An Assets document in JSON. */
export function assetsJson(facts: HeaderFacts, now: number, counts: { assetBufferSize: number; assetCount: number }, assets: readonly ToolAsset[]): string {
  return document('MTConnectAssets', { Header: header(facts, now, counts), Assets: assets.length ? { CuttingTool: assets.map(assetJson) } : {} });
}

/** An MTConnectError document in JSON: the error under its element name, with its errorCode as cppagent writes it. */
export function errorJson(facts: HeaderFacts, now: number, bufferSize: number, error: AgentError, uri: string, request: string): string {
  const node: Json = { errorCode: error.errorCode, ErrorMessage: error.message, Request: request, URI: uri };
  if (error.assetId !== undefined) node.AssetId = error.assetId;
  if (error.queryParameter) {
    const q = error.queryParameter;
    node.QueryParameter = {
      name: q.name,
      Value: q.value,
      ...(q.minimum !== undefined ? { Minimum: q.minimum } : {}),
      ...(q.maximum !== undefined ? { Maximum: q.maximum } : {}),
      ...(q.type !== undefined ? { Type: q.type } : {}),
      ...(q.format !== undefined ? { Format: q.format } : {}),
    };
  }
  return document('MTConnectError', { Header: header(facts, now, { bufferSize }), Errors: { [error.kind]: [node] } });
}
