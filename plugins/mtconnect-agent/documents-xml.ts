/**
 * The MTConnect 2.7 XML documents (Devices, Streams, Assets, Error), written
 * by fast-xml-parser's XMLBuilder from plain objects: it escapes every
 * attribute and text, and was the fastest of the kept XML writers measured
 * (docs/mtconnect.md, "How the documents are written"). Element order follows
 * the 2.7 schemas, which the tests validate every kind of document against.
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { AgentError } from './agent-error.js';
import { creationTime, elementName, framed, isoTime, runs, SCHEMA_VERSION, sortForPrinting, xmlText, type DocumentFrame, type HeaderFacts, type ToolAsset } from './documents.js';
import type { ComponentDef, DataItemDef } from './model.js';
import type { Served } from './served.js';
import type { SequenceHeader } from './stream-reads.js';

type XmlNode = Record<string, unknown>;

// jPath off: the builder then tracks paths without making a string per node (its option, not in its typings), twice as fast.
const BUILDER_OPTIONS = { ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text', format: false, suppressEmptyNode: true, jPath: false };
const builder = new XMLBuilder(BUILDER_OPTIONS);

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function root(kind: 'Devices' | 'Streams' | 'Assets' | 'Error'): XmlNode {
  const ns = `urn:mtconnect.org:MTConnect${kind}:${SCHEMA_VERSION}`;
  return {
    '@_xmlns:m': ns,
    '@_xmlns': ns,
    '@_xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
    '@_xsi:schemaLocation': `${ns} http://schemas.mtconnect.org/schemas/MTConnect${kind}_${SCHEMA_VERSION}.xsd`,
  };
}

function header(facts: HeaderFacts, now: number, extra: Record<string, number>): XmlNode {
  const node: XmlNode = {
    '@_creationTime': creationTime(now),
    '@_sender': xmlText(facts.sender),
    '@_instanceId': facts.instanceId,
    '@_version': facts.version,
    '@_deviceModelChangeTime': isoTime(facts.deviceModelChangeTime),
  };
  for (const [key, value] of Object.entries(extra)) node[`@_${key}`] = value;
  return node;
}

function document(name: string, body: XmlNode): string {
  return DECLARATION + builder.build({ [name]: body });
}

function dataItemNode(d: DataItemDef): XmlNode {
  const node: XmlNode = { '@_category': d.category, '@_id': d.id, '@_name': xmlText(d.name), '@_type': d.type };
  if (d.subType !== undefined) node['@_subType'] = d.subType;
  if (d.units !== undefined) node['@_units'] = d.units;
  if (d.nativeUnits !== undefined) node['@_nativeUnits'] = d.nativeUnits;
  return node;
}

function componentNode(c: ComponentDef): XmlNode {
  const node: XmlNode = { '@_id': c.id };
  if (c.name !== undefined) node['@_name'] = xmlText(c.name);
  if (c.uuid !== undefined) node['@_uuid'] = xmlText(c.uuid);
  if (c.element === 'Agent' || c.element === 'Device') node['@_mtconnectVersion'] = SCHEMA_VERSION;
  if (c.description !== undefined) node.Description = xmlText(c.description);
  if (c.dataItems.length) node.DataItems = { DataItem: c.dataItems.map(dataItemNode) };
  if (c.components.length) {
    const children: Record<string, XmlNode[]> = {};
    for (const child of c.components) (children[child.element] ??= []).push(componentNode(child));
    node.Components = children;
  }
  return node;
}

/** The probe: the devices with their components and data items. */
export function devicesXml(facts: HeaderFacts, now: number, counts: { bufferSize: number; assetBufferSize: number; assetCount: number }, devices: readonly ComponentDef[]): string {
  const grouped: Record<string, XmlNode[]> = {};
  for (const d of devices) (grouped[d.element] ??= []).push(componentNode(d));
  return document('MTConnectDevices', { ...root('Devices'), Header: header(facts, now, counts), Devices: grouped });
}

function observationNode(s: Served): XmlNode {
  const { o, def } = s;
  const node: XmlNode = { '@_dataItemId': def.id, '@_timestamp': isoTime(o.ts), '@_name': def.name, '@_sequence': o.seq };
  if (def.category === 'CONDITION') node['@_type'] = def.type;
  // An active condition is identified by its conditionId; as cppagent, its native code.
  if (o.nativeCode !== undefined && (o.level === 'Fault' || o.level === 'Warning')) node['@_conditionId'] = xmlText(o.nativeCode);
  if (o.nativeCode !== undefined) node['@_nativeCode'] = xmlText(o.nativeCode);
  if (o.nativeSeverity !== undefined) node['@_nativeSeverity'] = o.nativeSeverity;
  if (o.value !== '') node['#text'] = xmlText(o.value);
  return node;
}

const CATEGORY_ELEMENT = { SAMPLE: 'Samples', EVENT: 'Events', CONDITION: 'Condition' } as const;

/** The observations of one component stream, by category, each category's elements in order. */
function componentStream(observations: Served[]): XmlNode {
  const c = observations[0]!.def.parent;
  const node: XmlNode = { '@_component': c.element };
  if (c.name !== undefined) node['@_name'] = xmlText(c.name);
  node['@_componentId'] = c.id;
  for (const category of runs(observations, (s) => s.def.category)) {
    // Elements of one name are printed together, in the order of their first one (the schema allows any order).
    const elements: Record<string, XmlNode[]> = {};
    for (const s of category) (elements[elementName(s)] ??= []).push(observationNode(s));
    node[CATEGORY_ELEMENT[category[0]!.def.category]] = elements;
  }
  return node;
}

/** One device's DeviceStream element, of its observations in printing order (sortForPrinting). */
export function deviceStreamXml(byDevice: readonly Served[]): string {
  const d = byDevice[0]!.def.parent.device;
  const node = { '@_name': xmlText(d.name ?? ''), '@_uuid': xmlText(d.uuid ?? ''), ComponentStream: runs(byDevice, (s) => s.def.parent).map(componentStream) };
  return builder.build({ DeviceStream: node }) as string;
}

/** Stands for the DeviceStream elements in the document written around them; found after the header, whatever it says. */
const STREAMS_MARK = 'DEVICE-STREAMS-GO-HERE';

/** The text of a Streams document before and after its DeviceStream elements (none when `empty`). */
function streamsXmlFrame(facts: HeaderFacts, now: number, seq: SequenceHeader, empty: boolean): DocumentFrame {
  const counts = { bufferSize: seq.bufferSize, nextSequence: seq.nextSequence, firstSequence: seq.firstSequence, lastSequence: seq.lastSequence };
  const whole = document('MTConnectStreams', { ...root('Streams'), Header: header(facts, now, counts), Streams: empty ? '' : { '#text': STREAMS_MARK } });
  if (empty) return { head: whole, tail: '' };
  const at = whole.lastIndexOf(STREAMS_MARK);
  return { head: whole.slice(0, at), tail: whole.slice(at + STREAMS_MARK.length) };
}

/** The Streams document of DeviceStream elements kept encoded (deviceStreamXml), in document order. */
export function streamsXmlOfParts(facts: HeaderFacts, now: number, seq: SequenceHeader, parts: readonly Buffer[]): Buffer {
  return framed(streamsXmlFrame(facts, now, seq, parts.length === 0), parts);
}

/** A Streams document (/current, /sample, a chunk of a stream), as UTF-8: each DeviceStream encoded as it is written, then copied once. */
export function streamsXml(facts: HeaderFacts, now: number, seq: SequenceHeader, observations: Served[]): Buffer {
  sortForPrinting(observations);
  const parts = runs(observations, (s) => s.def.parent.device).map((byDevice) => Buffer.from(deviceStreamXml(byDevice)));
  return framed(streamsXmlFrame(facts, now, seq, parts.length === 0), parts);
}

function assetNode(a: ToolAsset): XmlNode {
  return {
    '@_assetId': a.assetId,
    '@_timestamp': isoTime(a.timestamp),
    '@_deviceUuid': xmlText(a.deviceUuid),
    '@_toolId': a.toolId,
    CuttingToolLifeCycle: {
      CutterStatus: { Status: a.status },
      ToolLife: { '@_type': a.lifeType, '@_countDirection': 'UP', '@_limit': a.limit, '#text': a.used },
      ProgramToolGroup: String(a.group),
      ProgramToolNumber: String(a.toolNumber),
    },
  };
}

/** An Assets document. */
export function assetsXml(facts: HeaderFacts, now: number, counts: { assetBufferSize: number; assetCount: number }, assets: readonly ToolAsset[]): string {
  return document('MTConnectAssets', { ...root('Assets'), Header: header(facts, now, counts), Assets: assets.length ? { CuttingTool: assets.map(assetNode) } : '' });
}

/** An MTConnectError document for `error` of the request `uri`. */
export function errorXml(facts: HeaderFacts, now: number, bufferSize: number, error: AgentError, uri: string, request: string): string {
  const node: XmlNode = {};
  if (error.queryParameter) {
    const q = error.queryParameter;
    const parameter: XmlNode = { '@_name': q.name };
    if (q.maximum !== undefined) parameter.Maximum = q.maximum;
    if (q.minimum !== undefined) parameter.Minimum = q.minimum;
    parameter.Value = xmlText(q.value);
    if (q.type !== undefined) parameter.Type = q.type;
    if (q.format !== undefined) parameter.Format = q.format;
    node.QueryParameter = parameter;
  }
  if (error.assetId !== undefined) node.AssetId = xmlText(error.assetId);
  node.URI = xmlText(uri);
  node.ErrorMessage = xmlText(error.message);
  node.Request = request;
  return document('MTConnectError', { ...root('Error'), Header: header(facts, now, { bufferSize }), Errors: { [error.kind]: node } });
}
