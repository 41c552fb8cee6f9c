/**
 * The MTConnect 2.7 XML documents (Devices, Streams, Assets, Error), written
 * by fast-xml-parser's XMLBuilder from plain objects: it escapes every
 * attribute and text, and was the fastest of the kept XML writers measured
 * (docs/mtconnect.md, "How the documents are written"). Element order follows
 * the 2.7 schemas, which the tests validate every kind of document against.
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { AgentError } from './agent-error.js';
import { creationTime, elementName, framed, isoTime, runs, SCHEMA_VERSION, sortForPrinting, xmlEscaped, xmlText, type Chunks, type DocumentFrame, type HeaderFacts, type ToolAsset } from './documents.js';
import type { ComponentDef, DataItemDef } from './model.js';
import type { Served } from './served.js';
import type { SequenceHeader } from './stream-reads.js';

type XmlNode = Record<string, unknown>;

// jPath off: the builder then tracks paths without making a string per node (its option, not in its typings), twice as fast.
const BUILDER_OPTIONS = { ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text', format: false, suppressEmptyNode: true, jPath: false };
const builder = new XMLBuilder(BUILDER_OPTIONS);
/**
 * Observations are written one element per call, by a builder whose entity
 * pass is off: each text an observation carries is escaped by xmlEscaped
 * first, in one pass, and the builder still escapes the quotes of attribute
 * values. The builder's pass (five regular expressions over every value)
 * was a third of the time spent writing a large /sample.
 */
const observationBuilder = new XMLBuilder({ ...BUILDER_OPTIONS, processEntities: false });

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

/** One observation's element. An observation is never changed once made, so its element can be kept (current-streams.ts). */
export function observationXml(s: Served): string {
  const { o, def } = s;
  const node: XmlNode = { '@_dataItemId': xmlEscaped(def.id), '@_timestamp': isoTime(o.ts), '@_name': xmlEscaped(def.name), '@_sequence': o.seq };
  if (def.category === 'CONDITION') node['@_type'] = xmlEscaped(def.type);
  // An active condition is identified by its conditionId; as cppagent, its native code.
  if (o.nativeCode !== undefined && (o.level === 'Fault' || o.level === 'Warning')) node['@_conditionId'] = xmlEscaped(o.nativeCode);
  if (o.nativeCode !== undefined) node['@_nativeCode'] = xmlEscaped(o.nativeCode);
  if (o.nativeSeverity !== undefined) node['@_nativeSeverity'] = xmlEscaped(o.nativeSeverity);
  if (o.value !== '') node['#text'] = xmlEscaped(o.value);
  return observationBuilder.build({ [elementName(s)]: node }) as string;
}

const CATEGORY_ELEMENT = { SAMPLE: 'Samples', EVENT: 'Events', CONDITION: 'Condition' } as const;

/**
 * Stands for a category's observations in a DeviceStream's frame. No text
 * of the frame can hold it: the names and uuids in it are xmlText (which
 * replaces U+0000), its ids are XML ids.
 */
const OBSERVATIONS_MARK = '\u0000';

/**
 * A DeviceStream element without its observations: the text before the
 * first category's observations, between each two, and after the last.
 * The builder writes it with a mark where the observations go.
 */
function deviceStreamFrame(device: ComponentDef, components: readonly Served[][][]): string[] {
  const streams = components.map((categories) => {
    const c = categories[0]![0]!.def.parent;
    const node: XmlNode = { '@_component': c.element };
    if (c.name !== undefined) node['@_name'] = xmlText(c.name);
    node['@_componentId'] = c.id;
    for (const category of categories) node[CATEGORY_ELEMENT[category[0]!.def.category]] = { '#text': OBSERVATIONS_MARK };
    return node;
  });
  const frame = builder.build({ DeviceStream: { '@_name': xmlText(device.name ?? ''), '@_uuid': xmlText(device.uuid ?? ''), ComponentStream: streams } }) as string;
  const segments = frame.split(OBSERVATIONS_MARK);
  const expected = components.reduce((n, categories) => n + categories.length, 0) + 1;
  if (segments.length !== expected) throw new Error(`a DeviceStream frame of ${expected - 1} categories has ${segments.length - 1} marks`);
  return segments;
}

/** The frames kept per device, by the shape they were written for (its components and their categories); a new model has new devices. */
const framesOf = new WeakMap<ComponentDef, Map<string, string[]>>();
/** Shapes kept per device at most (a device has a few: with or without its conditions, its axes). */
const SHAPES_PER_DEVICE = 32;

/** Adds a category's observations written by `write` to `out`: elements of one name together, in the order of their first one (the schema allows any order). */
function categoryXml(category: readonly Served[], write: (s: Served) => string, out: string[]): void {
  const first = elementName(category[0]!);
  // The first name's elements go first, as they come; those of other names are gathered by name.
  let others: Map<string, string[]> | undefined;
  for (const s of category) {
    const name = elementName(s);
    if (name === first) {
      out.push(write(s));
      continue;
    }
    others ??= new Map();
    let written = others.get(name);
    if (!written) others.set(name, (written = []));
    written.push(write(s));
  }
  if (others) for (const written of others.values()) for (const element of written) out.push(element);
}

/**
 * One device's DeviceStream element, of its observations in printing order
 * (sortForPrinting); `write` writes each observation's element (observationXml,
 * or an element kept from before). The element around them is the device's
 * frame for its shape, written once by the builder and kept. The text is
 * joined from its pieces at once, so it is one flat string: a string made
 * by adding pieces is a tree of them, walked again at each use.
 */
export function deviceStreamXml(byDevice: readonly Served[], write: (s: Served) => string = observationXml): string {
  const device = byDevice[0]!.def.parent.device;
  const components = runs(byDevice, (s) => s.def.parent).map((c) => runs(c, (s) => s.def.category));
  let shape = '';
  for (const categories of components) {
    shape += categories[0]![0]!.def.parent.id;
    for (const category of categories) shape += ` ${category[0]!.def.category}`;
    shape += '\n';
  }
  let kept = framesOf.get(device);
  if (!kept) framesOf.set(device, (kept = new Map()));
  let frame = kept.get(shape);
  if (!frame) {
    frame = deviceStreamFrame(device, components);
    if (kept.size < SHAPES_PER_DEVICE) kept.set(shape, frame);
  }
  const pieces = [frame[0]!];
  let i = 1;
  for (const categories of components) {
    for (const category of categories) {
      categoryXml(category, write, pieces);
      pieces.push(frame[i++]!);
    }
  }
  return pieces.join('');
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

/** The Streams document of DeviceStream elements kept (deviceStreamXml), in document order. */
export function streamsXmlOfParts(facts: HeaderFacts, now: number, seq: SequenceHeader, parts: readonly Buffer[]): Chunks {
  return framed(streamsXmlFrame(facts, now, seq, parts.length === 0), parts);
}

/** A Streams document (/current, /sample, a chunk of a stream), as UTF-8 chunks (documents.ts, framed). */
export function streamsXml(facts: HeaderFacts, now: number, seq: SequenceHeader, observations: Served[]): Chunks {
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
