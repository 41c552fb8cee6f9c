/**
 * The agent's device model: the `Agent` device (its availability, and an
 * Adapter per machine with the connection of its driver), and one `Device`
 * per active machine with a Controller (emergency stop, mode, the SYSTEM
 * condition) and a Path (execution, program and its vault version, part count, tool number), and
 * the Axes the driver reads (motion-items.ts). Element ids are
 * the machineID made a valid XML ID (see `idBase`) and a suffix, so they are
 * stable and unique. Rebuilt when the fleet's machines change.
 */
import type { MachineConfig } from '../../core/roles/gateway/machine-config.js';
import type { MotionLayout } from './motion-items.js';
import type { ItemKey, ValueItem } from './replay.js';

export type Category = 'SAMPLE' | 'EVENT' | 'CONDITION';

/** What an observation of a data item comes from: a machine's item, or the Agent's own availability. */
export type ItemSource = { machineID: string; item: ItemKey } | { agent: 'avail' };

export interface DataItemDef {
  id: string;
  type: string;
  category: Category;
  name: string;
  subType?: string;
  units?: string;
  /** The unit the driver gives, when the agent converts it (an inch axis served in millimetres). */
  nativeUnits?: string;
  source: ItemSource;
  /** The component (or device) it belongs to. */
  parent: ComponentDef;
  /** Its place in the printing order of the model's data items (documents.ts, sortForPrinting). */
  rank?: number;
}

export interface ComponentDef {
  /** The element: Device, Agent, Controller, Path, Adapters, Adapter. */
  element: string;
  id: string;
  name?: string;
  uuid?: string;
  description?: string;
  dataItems: DataItemDef[];
  components: ComponentDef[];
  /** The device it is part of (itself for a device). */
  device: ComponentDef;
  parentComponent?: ComponentDef;
}

export interface DeviceModel {
  /** The Agent first, then the machines in machineID order. */
  devices: ComponentDef[];
  dataItems: Map<string, DataItemDef>;
  /** A machine's data items by what they show. */
  byMachine: Map<string, Partial<Record<ItemKey, DataItemDef>>>;
  agentAvailability: DataItemDef;
}

/**
 * The machineID as the base of XML ids: `_` doubled (so the single `_` before
 * a suffix cannot be part of a machineID) and a leading digit prefixed with
 * `_` (an XML ID starts with a letter or `_`).
 */
export function idBase(machineID: string): string {
  return (/^[0-9]/.test(machineID) ? '_' : '') + machineID.replaceAll('_', '__');
}

const AGENT_ID = '_agent';

type ItemSpec = [item: ValueItem | 'system', suffix: string, type: string, category: Category, name: string];

const DEVICE_ITEMS: ItemSpec[] = [
  ['avail', 'avail', 'AVAILABILITY', 'EVENT', 'avail'],
  ['state', 'state', 'MESSAGE', 'EVENT', 'state'],
];
const CONTROLLER_ITEMS: ItemSpec[] = [
  ['estop', 'estop', 'EMERGENCY_STOP', 'EVENT', 'estop'],
  ['mode', 'mode', 'CONTROLLER_MODE', 'EVENT', 'mode'],
  ['system', 'system', 'SYSTEM', 'CONDITION', 'system'],
];
const PATH_ITEMS: ItemSpec[] = [
  ['exec', 'exec', 'EXECUTION', 'EVENT', 'execution'],
  ['program', 'program', 'PROGRAM', 'EVENT', 'program'],
  // The running program's vault version (vault-versions.ts): 2.7 has no type of its own for either, so two string events of the Path.
  ['vaultProgram', 'vault_program', 'PROGRAM_HEADER', 'EVENT', 'vault_program'],
  ['vaultHash', 'vault_hash', 'PROGRAM_COMMENT', 'EVENT', 'vault_hash'],
];
const COUNT_ITEMS: ItemSpec[] = [['partCount', 'partcount', 'PART_COUNT', 'EVENT', 'part_count']];

function component(element: string, id: string, device: ComponentDef | undefined, extra: Partial<ComponentDef> = {}): ComponentDef {
  const c = { element, id, dataItems: [], components: [], ...extra } as unknown as ComponentDef;
  c.device = device ?? c;
  return c;
}

/**
 * Builds the model of `machines` (the active ones are served); `uuidOf` gives
 * a machine's device uuid, `motionOf` the motion items its driver reads.
 */
export function buildModel(
  machines: readonly MachineConfig[],
  agentUuid: string,
  uuidOf: (machineID: string) => string,
  motionOf: (machineID: string) => MotionLayout | undefined = () => undefined,
): DeviceModel {
  const dataItems = new Map<string, DataItemDef>();
  const byMachine: DeviceModel['byMachine'] = new Map();
  const add = (parent: ComponentDef, id: string, type: string, category: Category, name: string, source: ItemSource, extra: Partial<DataItemDef> = {}): DataItemDef => {
    const def: DataItemDef = { id, type, category, name, ...extra, source, parent };
    parent.dataItems.push(def);
    dataItems.set(id, def);
    return def;
  };
  const agent = component('Agent', AGENT_ID, undefined, { name: 'Agent', uuid: agentUuid });
  const agentAvailability = add(agent, `${AGENT_ID}_avail`, 'AVAILABILITY', 'EVENT', 'agent_avail', { agent: 'avail' });
  const adapters = component('Adapters', `${AGENT_ID}_adapters`, agent, { parentComponent: agent });
  agent.components.push(adapters);
  const devices = [agent];
  const active = machines.filter((m) => m.isActive).sort((a, b) => (a.machineID < b.machineID ? -1 : a.machineID > b.machineID ? 1 : 0));
  for (const m of active) {
    const base = idBase(m.machineID);
    const items: Partial<Record<ItemKey, DataItemDef>> = {};
    byMachine.set(m.machineID, items);
    const addAll = (parent: ComponentDef, specs: ItemSpec[]) => {
      for (const [item, suffix, type, category, name] of specs) items[item] = add(parent, `${base}_${suffix}`, type, category, name, { machineID: m.machineID, item });
    };
    const adapter = component('Adapter', `${base}_adapter`, agent, { name: m.machineID, parentComponent: adapters });
    adapters.components.push(adapter);
    items.connection = add(adapter, `${base}_connection`, 'CONNECTION_STATUS', 'EVENT', 'connection', { machineID: m.machineID, item: 'connection' });
    const device = component('Device', base, undefined, { name: m.machineID, uuid: uuidOf(m.machineID), description: describe(m) });
    addAll(device, DEVICE_ITEMS);
    const controller = component('Controller', `${base}_controller`, device, { name: 'controller', parentComponent: device });
    const path = component('Path', `${base}_path`, device, { name: 'path', parentComponent: controller });
    device.components.push(controller);
    controller.components.push(path);
    if (m.tasks.CNCStatus.enabled) {
      addAll(controller, CONTROLLER_ITEMS);
      addAll(path, PATH_ITEMS);
    }
    if (m.tasks.Count.enabled) addAll(path, COUNT_ITEMS);
    const motion = m.tasks.CNCStatus.enabled ? motionOf(m.machineID) : undefined;
    if (motion) addMotion(motion, { device, path, base }, (parent, item, suffix, [type, category], name, extra) => {
      items[item] = add(parent, `${base}_${suffix}`, type, category, name, { machineID: m.machineID, item }, extra);
    });
    devices.push(device);
  }
  rankForPrinting(dataItems.values());
  return { devices, dataItems, byMachine, agentAvailability };
}

const CATEGORY_ORDER = { SAMPLE: 0, EVENT: 1, CONDITION: 2 } as const;

/** The printing order of data items: by device, component, category and id, as cppagent sorts them. */
export function comparePrinting(a: DataItemDef, b: DataItemDef): number {
  const da = a.parent.device.id;
  const db = b.parent.device.id;
  if (da !== db) return da < db ? -1 : 1;
  const ca = a.parent.id;
  const cb = b.parent.id;
  if (ca !== cb) return ca < cb ? -1 : 1;
  const ka = CATEGORY_ORDER[a.category];
  const kb = CATEGORY_ORDER[b.category];
  if (ka !== kb) return ka - kb;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

/** Ranks the data items in printing order, so observations are sorted by a number and their sequence. */
function rankForPrinting(defs: Iterable<DataItemDef>): void {
  const sorted = [...defs].sort(comparePrinting);
  for (let i = 0; i < sorted.length; i++) sorted[i]!.rank = i;
}

type AddMotionItem = (parent: ComponentDef, item: ItemKey, suffix: string, kind: [type: string, category: Category], name: string, extra: Partial<DataItemDef>) => void;

/**
 * A machine's motion items: TOOL_NUMBER on the Path, an `Axes` component with
 * a `Linear` (POSITION, mm) or `Rotary` (ANGLE, degrees) per axis and a
 * `Rotary` spindle (ROTARY_VELOCITY, LOAD), each only when the driver reads it.
 */
function addMotion(layout: MotionLayout, at: { device: ComponentDef; path: ComponentDef; base: string }, addItem: AddMotionItem): void {
  const { device, path, base } = at;
  if (layout.tool) addItem(path, 'tool', 'tool', ['TOOL_NUMBER', 'EVENT'], 'tool_number', {});
  if (!layout.axes.length && !layout.spindleSpeed && !layout.spindleLoad) return;
  const axes = component('Axes', `${base}_axes`, device, { name: 'axes', parentComponent: device });
  device.components.push(axes);
  layout.axes.forEach(({ axis, unit }, i) => {
    const rotary = unit === 'deg';
    // An axis name that is not a plain word (or is long) is numbered in the ids; its name stays the element's name.
    const key = /^[A-Za-z0-9]{1,16}$/.test(axis) ? axis : `axis${i}`;
    const element = component(rotary ? 'Rotary' : 'Linear', `${base}_axis_${key}`, device, { name: axis, parentComponent: axes });
    axes.components.push(element);
    const extra: Partial<DataItemDef> = rotary ? { subType: 'ACTUAL', units: 'DEGREE' } : { subType: 'ACTUAL', units: 'MILLIMETER', ...(unit === 'inch' ? { nativeUnits: 'INCH' } : {}) };
    addItem(element, `axis:${axis}`, `axis_${key}_pos`, rotary ? ['ANGLE', 'SAMPLE'] : ['POSITION', 'SAMPLE'], `${key}_actual`, extra);
  });
  if (layout.spindleSpeed || layout.spindleLoad) {
    const spindle = component('Rotary', `${base}_spindle`, device, { name: 'spindle', parentComponent: axes });
    axes.components.push(spindle);
    if (layout.spindleSpeed) addItem(spindle, 'spindleSpeed', 'spindle_speed', ['ROTARY_VELOCITY', 'SAMPLE'], 'spindle_speed', { subType: 'ACTUAL', units: 'REVOLUTION/MINUTE' });
    if (layout.spindleLoad) addItem(spindle, 'spindleLoad', 'spindle_load', ['LOAD', 'SAMPLE'], 'spindle_load', { units: 'PERCENT' });
  }
}

function describe(m: MachineConfig): string {
  const control = [m.system, m.model].filter((s) => s !== '').join(' ');
  return control ? `${m.name} (${control})` : m.name;
}

/** The device named `nameOrUuid` (its name or uuid, as agents look devices up). */
export function findDevice(model: DeviceModel, nameOrUuid: string): ComponentDef | undefined {
  return model.devices.find((d) => d.name === nameOrUuid || d.uuid === nameOrUuid);
}

/** Every data item id under `node` (itself included), in document order. */
export function dataItemIdsUnder(node: ComponentDef, into: Set<string> = new Set()): Set<string> {
  for (const d of node.dataItems) into.add(d.id);
  for (const c of node.components) dataItemIdsUnder(c, into);
  return into;
}
