/**
 * An MTConnectDevices document (an agent's /probe, or a Devices file given
 * for an adapter) → the device models it describes. Each data item keeps its
 * type, subType and category, and the component whose `DataItems` hold it.
 */
import { CATEGORIES, type Category, type DataItem, type DeviceModel } from './device-model.js';
import { parseStreams, type AgentError } from './streams.js';
import { integerAttribute, readXml, XmlProblem, type XmlElement, type XmlLimits } from './xml-reader.js';

export interface DevicesDocument {
  /** The agent's instanceId from the Header; undefined in a Devices file without one. */
  instanceId: number | undefined;
  /** The Header's deviceModelChangeTime (when the agent's model last changed); undefined in a Devices file without one. */
  deviceModelChangeTime?: string | undefined;
  /** The machines described; an agent's own `Agent` device is left out. */
  devices: DeviceModel[];
}

interface ComponentFrame {
  type: string;
  id?: string;
  name?: string;
  /** The element depth of the component element. */
  depth: number;
}

/** Parses an MTConnectDevices document; throws XmlProblem when it is not one. */
export function parseDevices(text: string, limits?: XmlLimits): DevicesDocument {
  let root: string | undefined;
  let instanceId: number | undefined;
  let deviceModelChangeTime: string | undefined;
  const devices: Array<{ name: string; uuid?: string; dataItems: DataItem[]; agent: boolean }> = [];
  const components: ComponentFrame[] = [];
  const path: string[] = [];
  let item: DataItem | undefined;

  const open = (e: XmlElement): boolean => {
    const parent = path[path.length - 1];
    path.push(e.name);
    if (e.depth === 0) {
      root = e.name;
      return false;
    }
    if (e.name === 'Header' && e.depth === 1) {
      instanceId = integerAttribute(e.attributes, 'instanceId');
      deviceModelChangeTime = e.attributes.deviceModelChangeTime?.slice(0, 64);
    }
    if (parent === 'Devices' || parent === 'Components') {
      components.push({ type: e.name, id: e.attributes.id, name: e.attributes.name, depth: e.depth });
      if (parent === 'Devices') {
        const name = e.attributes.name ?? e.attributes.id;
        if (!name) throw new XmlProblem(`a <${e.name}> without a name`);
        devices.push({ name, ...(e.attributes.uuid ? { uuid: e.attributes.uuid } : {}), dataItems: [], agent: e.name === 'Agent' });
      }
      return false;
    }
    if (e.name === 'DataItem' && parent === 'DataItems') {
      item = dataItemOf(e, components[components.length - 1]);
      devices[devices.length - 1]?.dataItems.push(item);
      return false;
    }
    return e.name === 'Source' && parent === 'DataItem';
  };
  const close = (e: XmlElement, text: string | undefined): void => {
    path.pop();
    const top = components[components.length - 1];
    if (top && top.depth === e.depth) components.pop();
    if (e.name === 'Source' && item && text !== undefined && text.trim()) item.source = text.trim();
    if (e.name === 'DataItem') item = undefined;
  };
  readXml(text, { open, close }, limits);
  if (root !== 'MTConnectDevices') throw new XmlProblem(`not an MTConnectDevices document (root <${root ?? 'none'}>)`);
  // The Agent device describes the agent itself (its adapters' connections), not a machine.
  return { instanceId, deviceModelChangeTime, devices: devices.filter((d) => !d.agent).map(({ agent: _agent, ...device }) => device) };
}

function dataItemOf(e: XmlElement, component: ComponentFrame | undefined): DataItem {
  const { id, name, type, subType, category, representation, units } = e.attributes;
  if (!id || !type) throw new XmlProblem(`a <DataItem> without ${id ? 'type' : 'id'}`);
  if (!CATEGORIES.includes(category as Category)) {
    throw new XmlProblem(`<DataItem id="${id.slice(0, 64)}"> has category '${String(category).slice(0, 32)}'; accepted: ${CATEGORIES.join(', ')}`);
  }
  return {
    id,
    type,
    category: category as Category,
    component: { type: component?.type ?? 'Device', ...(component?.id ? { id: component.id } : {}), ...(component?.name ? { name: component.name } : {}) },
    ...(name ? { name } : {}),
    ...(subType ? { subType } : {}),
    ...(representation ? { representation } : {}),
    ...(units ? { units } : {}),
  };
}

/** The device named or with the uuid `wanted`; the only device when `wanted` is undefined. Throws naming the devices there are. */
export function pickDevice(document: DevicesDocument, wanted: string | undefined, where: string): DeviceModel {
  const devices = document.devices;
  const named = (list: readonly DeviceModel[]) => list.map((d) => `'${d.name}'${d.uuid ? ` (uuid ${d.uuid})` : ''}`).slice(0, 20).join(', ');
  if (wanted === undefined) {
    const only = devices[0];
    if (devices.length === 1 && only) return only;
    throw new XmlProblem(`${where} describes ${devices.length} devices (${named(devices) || 'none'}); set driverOptions.device to one name or uuid`);
  }
  const found = devices.find((d) => d.name === wanted) ?? devices.find((d) => d.uuid === wanted);
  if (!found) throw new XmlProblem(`${where} has no device '${wanted}'; it has ${named(devices) || 'none'}`);
  return found;
}

/** An agent's /probe answer: the devices, or the agent's error (an MTConnectError document). */
export function parseProbeAnswer(text: string, limits?: XmlLimits): { kind: 'devices'; devices: DevicesDocument } | { kind: 'error'; errors: AgentError[] } {
  if (/<(\w+:)?MTConnectError[\s>]/.test(text.slice(0, 4096))) {
    const parsed = parseStreams(text, limits);
    if (parsed.kind === 'error') return parsed;
  }
  return { kind: 'devices', devices: parseDevices(text, limits) };
}
