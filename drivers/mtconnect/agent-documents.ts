/**
 * The agent stand-in's documents (MTConnect 2.7: Devices, Streams, Assets,
 * Error), written with fast-xml-parser's XMLBuilder, which escapes every
 * value: the stand-in writes no XML by hand.
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import type { AgentBuffer, BufferedObservation, StoredAsset } from './agent-buffer.js';
import { agentTime } from './agent-buffer.js';
import { elementNameOf } from './device-model.js';

export const MTCONNECT_VERSION = '2.7.0.0';
const NS = (kind: string) => `urn:mtconnect.org:MTConnect${kind}:2.7`;

/** A node of the builder's ordered form: `{ Element: children, ':@': attributes }`. */
export type OrderedNode = Record<string, unknown>;

const objects = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: false, suppressEmptyNode: true });
const ordered = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true, format: false, suppressEmptyNode: true });
const orderedParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true, parseTagValue: false, parseAttributeValue: false, trimValues: true, commentPropName: false, maxNestedTags: 64 });

const DECLARATION = { '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' } };

/** Parses XML into the ordered node form (the stand-in's own files and the assets its adapter lines carry). */
export function parseOrdered(xml: string): OrderedNode[] {
  return orderedParser.parse(xml) as OrderedNode[];
}

export interface HeaderFacts {
  instanceId: number;
  sender: string;
  buffer: AgentBuffer;
}

function header(facts: HeaderFacts, extra: Record<string, string | number> = {}): Record<string, string | number> {
  return {
    '@_creationTime': agentTime(Date.now()).replace(/\.\d+Z$/, 'Z'),
    '@_sender': facts.sender,
    '@_instanceId': facts.instanceId,
    '@_version': MTCONNECT_VERSION,
    '@_deviceModelChangeTime': agentTime(0),
    ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`@_${k}`, v])),
  };
}

/** An MTConnectDevices document around the devices' ordered nodes. */
export function devicesDocument(facts: HeaderFacts, devices: readonly OrderedNode[]): string {
  const b = facts.buffer;
  const head = header(facts, { bufferSize: b.capacity, assetBufferSize: 1024, assetCount: b.assets.size });
  const attributes = Object.fromEntries(Object.entries(head).map(([k, v]) => [k.slice(2), v]));
  const root = [
    { '?xml': [{ '#text': '' }], ':@': { version: '1.0', encoding: 'UTF-8' } },
    { MTConnectDevices: [{ Header: [], ':@': attributes }, { Devices: devices }], ':@': { xmlns: NS('Devices') } },
  ];
  return ordered.build(root) as string;
}

export interface StreamDevice {
  name: string;
  uuid: string;
}

function observationElement(o: BufferedObservation): [string, Record<string, string | number>] {
  const attributes: Record<string, string | number> = { '@_dataItemId': o.item.id, '@_timestamp': o.timestamp, '@_sequence': o.sequence };
  if (o.item.name) attributes['@_name'] = o.item.name;
  if (o.item.subType) attributes['@_subType'] = o.item.subType;
  if (o.condition) {
    const level = o.condition.level;
    attributes['@_type'] = o.item.type;
    for (const key of ['nativeCode', 'nativeSeverity', 'qualifier'] as const) if (o.condition[key]) attributes[`@_${key}`] = o.condition[key] as string;
    if (o.condition.message && level !== 'NORMAL' && level !== 'UNAVAILABLE') attributes['#text'] = o.condition.message;
    return [level[0] + level.slice(1).toLowerCase(), attributes];
  }
  if (o.assetType) attributes['@_assetType'] = o.assetType;
  attributes['#text'] = o.value;
  return [elementNameOf(o.item.type), attributes];
}

const CONTAINER = { SAMPLE: 'Samples', EVENT: 'Events', CONDITION: 'Condition' } as const;

/** An MTConnectStreams document: the observations by device, component and category, in sequence order within each. */
export function streamsDocument(facts: HeaderFacts, devices: readonly StreamDevice[], observations: readonly BufferedObservation[], next: number): string {
  const b = facts.buffer;
  const byDevice = new Map<number, Map<string, { attributes: Record<string, string>; containers: Record<string, Record<string, unknown[]>> }>>();
  for (const o of observations) {
    const components = byDevice.get(o.device) ?? new Map();
    byDevice.set(o.device, components);
    const key = o.item.component.id ?? o.item.component.type;
    let component = components.get(key);
    if (!component) {
      const attributes: Record<string, string> = { '@_component': o.item.component.type, '@_componentId': key };
      if (o.item.component.name) attributes['@_name'] = o.item.component.name;
      component = { attributes, containers: {} };
      components.set(key, component);
    }
    const container = (component.containers[CONTAINER[o.item.category]] ??= {});
    const [element, attributes] = observationElement(o);
    (container[element] ??= []).push(attributes);
  }
  const streams = [...byDevice].map(([index, components]) => ({
    '@_name': devices[index]?.name,
    '@_uuid': devices[index]?.uuid,
    ComponentStream: [...components.values()].map((c) => ({ ...c.attributes, ...c.containers })),
  }));
  const head = header(facts, { bufferSize: b.capacity, nextSequence: next, firstSequence: b.first, lastSequence: Math.max(b.first, b.next - 1) });
  return objects.build({ ...DECLARATION, MTConnectStreams: { '@_xmlns': NS('Streams'), Header: head, Streams: streams.length ? { DeviceStream: streams } : '' } }) as string;
}

/** An MTConnectAssets document with the assets' own XML inside. */
export function assetsDocument(facts: HeaderFacts, assets: readonly StoredAsset[]): string {
  const head = header(facts, { assetBufferSize: 1024, assetCount: facts.buffer.assets.size });
  const attributes = Object.fromEntries(Object.entries(head).map(([k, v]) => [k.slice(2), v]));
  return ordered.build([
    { '?xml': [{ '#text': '' }], ':@': { version: '1.0', encoding: 'UTF-8' } },
    { MTConnectAssets: [{ Header: [], ':@': attributes }, { Assets: assets.map((a) => a.node) }], ':@': { xmlns: NS('Assets') } },
  ]) as string;
}

/** What an error names besides its message: the request, and for some codes the parameter or asset at fault. */
export interface ErrorDetails {
  uri: string;
  /** OUT_OF_RANGE: the query parameter out of range, its value and the range accepted. */
  parameter?: { name: string; value: number; minimum: number; maximum: number };
  /** ASSET_NOT_FOUND: the asset asked for. */
  assetId?: string;
}

/** An MTConnectError document with one error, in the 2.6+ form (`<OutOfRange>`, `<NoDevice>`, …). */
export function errorDocument(facts: HeaderFacts, code: string, message: string, details: ErrorDetails): string {
  const head = header(facts, { bufferSize: facts.buffer.capacity });
  const error: Record<string, unknown> = { URI: details.uri, ErrorMessage: message };
  if (details.parameter) {
    const p = details.parameter;
    error.QueryParameter = { '@_name': p.name, Value: p.value, Minimum: p.minimum, Maximum: p.maximum };
  }
  if (details.assetId !== undefined) error.AssetId = details.assetId;
  return objects.build({ ...DECLARATION, MTConnectError: { '@_xmlns': NS('Error'), Header: head, Errors: { [elementNameOf(code)]: error } } }) as string;
}
