/**
 * Which item families an OPC UA machine can serve: before connecting, from
 * the model and the NodeId map; after browsing, from what the server has.
 */
import type { ItemFamily } from '../../core/driver-seam/driver.js';
import type { MachineLayout } from './address-space.js';
import type { NodeItem, NodeMap, OpcuaOptions } from './options.js';

/** The items each family needs; a family is served when all of them are mapped. */
const NEEDS: ReadonlyArray<[ItemFamily, readonly NodeItem[]]> = [
  ['status', ['channelState']],
  ['alarm', ['messages']],
  ['feedAndSpindle', ['feedRate', 'feedOverride', 'spindleSpeed', 'spindleOverride', 'rapidOverride']],
  ['count', ['partCount', 'partsTotal']],
  ['toolNumber', ['toolNumber']],
  ['timeData', ['powerOnTime', 'operatingTime', 'cuttingTime', 'cycleTime']],
  ['toolLife', ['tools']],
];

/** Items OPC 40501 can provide, so a machine following the model may have them. */
const MODEL_ITEMS: ReadonlySet<NodeItem> = new Set([
  'channelState', 'channelMode', 'feedOverride', 'rapidOverride', 'spindleOverride', 'programName', 'programState',
  'partCount', 'partsTotal', 'powerOnTime', 'messages', 'tools',
]);

function served(has: (item: NodeItem) => boolean): Set<ItemFamily> {
  return new Set(NEEDS.filter(([, items]) => items.every(has)).map(([family]) => family));
}

/** The families a program directory adds: its files, and the active program when the model names it. */
function withPrograms(families: Set<ItemFamily>, programs: boolean, programName: boolean): Set<ItemFamily> {
  if (!programs) return families;
  families.add('programFiles').add('programList');
  if (programName) families.add('currentProgram');
  return families;
}

/** Before connecting, a machine following the model may have a program directory, as may one named by `programDirectory`. */
export function plannedFamilies(options: OpcuaOptions): Set<ItemFamily> {
  const has = (item: NodeItem) => MODEL_ITEMS.has(item) || options.nodes[item] !== undefined;
  return withPrograms(served(has), true, has('programName'));
}

export function familiesOf(layout: MachineLayout, programs: boolean): Set<ItemFamily> {
  return withPrograms(served((item) => layout.nodes[item] !== undefined), programs, layout.nodes.programName !== undefined);
}

/** Scalar items worth monitoring, plus every field of every condition. */
export function statusNodeIds(layout: MachineLayout): string[] {
  const scalar: Array<keyof NodeMap> = [
    'channelState', 'channelMode', 'programName', 'programState', 'feedRate', 'feedOverride', 'spindleSpeed', 'spindleOverride',
    'rapidOverride', 'partCount', 'partsTotal', 'partsRequired', 'toolNumber', 'powerOnTime', 'operatingTime', 'cuttingTime', 'cycleTime',
  ];
  const ids = scalar.map((item) => layout.nodes[item]).filter((id): id is string => id !== undefined);
  return [...new Set([...ids, ...conditionNodeIds(layout)])];
}

/** Every field NodeId of every condition, in a fixed order. */
export function conditionNodeIds(layout: MachineLayout): string[] {
  return layout.conditions.flatMap((c) => [c.activeId, c.severity, c.message, c.time, c.conditionName].filter((id): id is string => id !== undefined));
}
