/**
 * The mapping table of SHDR names, for an adapter read without a Devices
 * file: each name an adapter sends, with the MTConnect type (and subType,
 * category, component) it stands for. The common names below are those of
 * the reference agent's examples and simulator and of many adapters; a
 * machine's `driverOptions.dataItems` adds or overrides names.
 */
import type { Category, DataItem, DeviceModel } from './device-model.js';

/** One entry: what a name stands for. */
export interface NameEntry {
  type: string;
  subType?: string;
  category?: Category;
  /** The component's name, e.g. the axis of a LOAD (`X`). */
  component?: string;
  units?: string;
}

/** The category of the types the gateway reads, for a table entry that does not give one. */
export const TYPE_CATEGORIES: Readonly<Record<string, Category>> = {
  AVAILABILITY: 'EVENT',
  EXECUTION: 'EVENT',
  CONTROLLER_MODE: 'EVENT',
  EMERGENCY_STOP: 'EVENT',
  PROGRAM: 'EVENT',
  PART_COUNT: 'EVENT',
  TOOL_NUMBER: 'EVENT',
  TOOL_ID: 'EVENT',
  MESSAGE: 'EVENT',
  ALARM: 'EVENT',
  ASSET_CHANGED: 'EVENT',
  ASSET_REMOVED: 'EVENT',
  PATH_FEEDRATE: 'SAMPLE',
  PATH_FEEDRATE_OVERRIDE: 'EVENT',
  ROTARY_VELOCITY: 'SAMPLE',
  ROTARY_VELOCITY_OVERRIDE: 'EVENT',
  SPINDLE_SPEED: 'SAMPLE',
  LOAD: 'SAMPLE',
  POSITION: 'SAMPLE',
  EQUIPMENT_TIMER: 'SAMPLE',
  PROCESS_TIMER: 'SAMPLE',
  SYSTEM: 'CONDITION',
  LOGIC_PROGRAM: 'CONDITION',
  MOTION_PROGRAM: 'CONDITION',
  HARDWARE: 'CONDITION',
  COMMUNICATIONS: 'CONDITION',
  ACTUATOR: 'CONDITION',
  DATA_RANGE: 'CONDITION',
};

const axisLoad = (axis: string): NameEntry => ({ type: 'LOAD', component: axis, units: 'PERCENT' });

/** The common names, used unless `driverOptions.commonNames` is false. */
export const COMMON_NAMES: Readonly<Record<string, NameEntry>> = {
  avail: { type: 'AVAILABILITY' },
  availability: { type: 'AVAILABILITY' },
  estop: { type: 'EMERGENCY_STOP' },
  emergency_stop: { type: 'EMERGENCY_STOP' },
  execution: { type: 'EXECUTION' },
  exec: { type: 'EXECUTION' },
  mode: { type: 'CONTROLLER_MODE' },
  controller_mode: { type: 'CONTROLLER_MODE' },
  program: { type: 'PROGRAM' },
  part_count: { type: 'PART_COUNT' },
  PartCount: { type: 'PART_COUNT' },
  part_target: { type: 'PART_COUNT', subType: 'TARGET' },
  tool_number: { type: 'TOOL_NUMBER' },
  Tool_number: { type: 'TOOL_NUMBER' },
  tool_id: { type: 'TOOL_ID' },
  path_feedrate: { type: 'PATH_FEEDRATE', subType: 'ACTUAL', units: 'MILLIMETER/SECOND' },
  Fact: { type: 'PATH_FEEDRATE', subType: 'ACTUAL', units: 'MILLIMETER/SECOND' },
  Fovr: { type: 'PATH_FEEDRATE_OVERRIDE', subType: 'PROGRAMMED' },
  Frapidovr: { type: 'PATH_FEEDRATE_OVERRIDE', subType: 'RAPID' },
  Sspeed: { type: 'ROTARY_VELOCITY', subType: 'ACTUAL', component: 'S' },
  Sovr: { type: 'ROTARY_VELOCITY_OVERRIDE', component: 'S' },
  Xload: axisLoad('X'),
  Yload: axisLoad('Y'),
  Zload: axisLoad('Z'),
  Sload: axisLoad('S'),
  power_on_time: { type: 'EQUIPMENT_TIMER', subType: 'POWERED', units: 'SECOND' },
  operating_time: { type: 'EQUIPMENT_TIMER', subType: 'OPERATING', units: 'SECOND' },
  cutting_time: { type: 'EQUIPMENT_TIMER', subType: 'WORKING', units: 'SECOND' },
  cycle_time: { type: 'PROCESS_TIMER', subType: 'PROCESS', units: 'SECOND' },
  system: { type: 'SYSTEM', category: 'CONDITION' },
  logic: { type: 'LOGIC_PROGRAM', category: 'CONDITION' },
  motion: { type: 'MOTION_PROGRAM', category: 'CONDITION' },
  comms: { type: 'COMMUNICATIONS', category: 'CONDITION' },
  hardware: { type: 'HARDWARE', category: 'CONDITION' },
};

/** The component a type sits in when the table does not name one, as a probe would place it. */
function componentOf(entry: NameEntry): DataItem['component'] {
  if (entry.component !== undefined) return { type: entry.type === 'LOAD' && entry.component !== 'S' ? 'Linear' : 'Rotary', name: entry.component };
  if (entry.type === 'AVAILABILITY') return { type: 'Device' };
  if ((TYPE_CATEGORIES[entry.type] ?? entry.category) === 'CONDITION' || entry.type === 'EMERGENCY_STOP') return { type: 'Controller' };
  return { type: 'Path' };
}

/** The device model a table of names describes: one data item per name, its id the name. */
export function modelOfNames(deviceName: string, table: Readonly<Record<string, NameEntry>>): DeviceModel {
  const dataItems: DataItem[] = Object.entries(table).map(([name, entry]) => ({
    id: name,
    name,
    type: entry.type,
    category: entry.category ?? TYPE_CATEGORIES[entry.type] ?? 'EVENT',
    component: componentOf(entry),
    ...(entry.subType ? { subType: entry.subType } : {}),
    ...(entry.units ? { units: entry.units } : {}),
  }));
  return { name: deviceName, dataItems };
}
