/**
 * Which data item of a device feeds each field of the gateway's families,
 * found by MTConnect type and subType (not by name), preferring the subTypes
 * in the order listed. The families a device can serve follow from it.
 */
import type { ItemFamily } from '../../core/driver-seam/driver.js';
import type { DataItem, DeviceModel } from './device-model.js';

export interface Roles {
  availability?: DataItem;
  execution?: DataItem;
  controllerMode?: DataItem;
  emergencyStop?: DataItem;
  program?: DataItem;
  partCount?: DataItem;
  partsRequired?: DataItem;
  toolNumber?: DataItem;
  feedRate?: DataItem;
  feedOverride?: DataItem;
  rapidOverride?: DataItem;
  spindleSpeed?: DataItem;
  spindleOverride?: DataItem;
  powerOnTime?: DataItem;
  operatingTime?: DataItem;
  cuttingTime?: DataItem;
  cycleTime?: DataItem;
  /** LOAD of axis components (Linear, Rotary), by component name. */
  loads: DataItem[];
  /** Every CONDITION data item: their active entries are the alarms. */
  conditions: DataItem[];
  /** ASSET_CHANGED: the device has assets. */
  assetChanged?: DataItem;
}

type Preference = ReadonlyArray<readonly [type: string, subType: string | undefined]>;

/** The `[type, subType]` pairs each role takes, best first; `undefined` subType means none given. */
const ROLE_TYPES: Readonly<Record<Exclude<keyof Roles, 'loads' | 'conditions'>, Preference>> = {
  availability: [['AVAILABILITY', undefined]],
  execution: [['EXECUTION', undefined]],
  controllerMode: [['CONTROLLER_MODE', undefined]],
  emergencyStop: [['EMERGENCY_STOP', undefined]],
  program: [['PROGRAM', 'MAIN'], ['PROGRAM', undefined], ['PROGRAM', 'ACTIVE']],
  partCount: [['PART_COUNT', undefined], ['PART_COUNT', 'ALL'], ['PART_COUNT', 'COMPLETE'], ['PART_COUNT', 'GOOD']],
  partsRequired: [['PART_COUNT', 'TARGET']],
  toolNumber: [['TOOL_NUMBER', undefined], ['TOOL_ID', undefined]],
  feedRate: [['PATH_FEEDRATE', 'ACTUAL'], ['PATH_FEEDRATE', undefined]],
  feedOverride: [['PATH_FEEDRATE_OVERRIDE', 'PROGRAMMED'], ['PATH_FEEDRATE_OVERRIDE', undefined], ['PATH_FEEDRATE', 'OVERRIDE']],
  rapidOverride: [['PATH_FEEDRATE_OVERRIDE', 'RAPID']],
  spindleSpeed: [['ROTARY_VELOCITY', 'ACTUAL'], ['ROTARY_VELOCITY', undefined], ['SPINDLE_SPEED', 'ACTUAL'], ['SPINDLE_SPEED', undefined]],
  spindleOverride: [['ROTARY_VELOCITY_OVERRIDE', undefined], ['ROTARY_VELOCITY_OVERRIDE', 'PROGRAMMED'], ['SPINDLE_SPEED', 'OVERRIDE']],
  powerOnTime: [['EQUIPMENT_TIMER', 'POWERED']],
  operatingTime: [['EQUIPMENT_TIMER', 'OPERATING']],
  cuttingTime: [['EQUIPMENT_TIMER', 'WORKING']],
  cycleTime: [['PROCESS_TIMER', 'PROCESS']],
  assetChanged: [['ASSET_CHANGED', undefined]],
};

const AXIS_COMPONENTS = new Set(['Linear', 'Rotary', 'Spindle']);

/**
 * The roles of a device's data items. Where several data items could fill a
 * role (the names table lists `exec` and `execution`), one that is
 * `preferred` (received) wins over one listed earlier.
 */
export function rolesOf(model: DeviceModel, preferred: (item: DataItem) => boolean = () => true): Roles {
  const roles: Roles = { loads: [], conditions: [] };
  for (const [role, preference] of Object.entries(ROLE_TYPES) as Array<[keyof typeof ROLE_TYPES, Preference]>) {
    let fallback: DataItem | undefined;
    for (const [type, subType] of preference) {
      const candidates = model.dataItems.filter((d) => d.type === type && d.subType === subType && d.category !== 'CONDITION');
      fallback ??= candidates[0];
      const found = candidates.find(preferred);
      if (found) {
        roles[role] = found;
        break;
      }
    }
    if (!roles[role] && fallback) roles[role] = fallback;
  }
  for (const item of model.dataItems) {
    if (item.category === 'CONDITION') roles.conditions.push(item);
    else if (item.type === 'LOAD' && AXIS_COMPONENTS.has(item.component.type) && (item.units === undefined || item.units === 'PERCENT')) roles.loads.push(item);
  }
  return roles;
}

/**
 * The families a device serves: status, count, toolNumber, feedAndSpindle and
 * timeData when every data item they need is `present`; alarm and load when
 * any condition or axis load is; toolLife when the device has assets.
 */
export function servedFamilies(roles: Roles, present: (item: DataItem) => boolean, hasAssets: boolean): Set<ItemFamily> {
  const every = (items: ReadonlyArray<DataItem | undefined>) => items.every((item) => item !== undefined && present(item));
  const families = new Set<ItemFamily>(['status']);
  const scalar: Array<[ItemFamily, ReadonlyArray<DataItem | undefined>]> = [
    ['count', [roles.partCount]],
    ['toolNumber', [roles.toolNumber]],
    ['feedAndSpindle', [roles.feedRate, roles.feedOverride, roles.rapidOverride, roles.spindleSpeed, roles.spindleOverride]],
    ['timeData', [roles.powerOnTime, roles.operatingTime, roles.cuttingTime, roles.cycleTime]],
  ];
  for (const [family, items] of scalar) if (every(items)) families.add(family);
  if (roles.conditions.some(present)) families.add('alarm');
  if (roles.loads.some(present)) families.add('load');
  if (hasAssets) families.add('toolLife');
  return families;
}
