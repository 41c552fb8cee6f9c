/**
 * The address space of one simulated machine tool, built in code after OPC
 * 40501: Objects/Machines/<machineID>/{Identification, Monitoring, Production,
 * Notification, Equipment}, BrowseNames in the DI / Machinery / MachineTool
 * namespaces, NodeIds in the simulator's own namespace. A few values the model
 * lacks (actual feed and speed, active tool, timers) sit in the simulator's
 * namespace, as a vendor's server would add them.
 */
import type { INamespace, UAObject, UAVariable } from 'node-opcua';
import type { ExecutionState, OperatingMode } from '../../core/driver.js';
import type { SimulatedMachine } from '../simulator/model.js';
import type { OpcuaModule } from './connection.js';
import { CHANNEL_MODES, CHANNEL_STATES, TOOL_LIFE_INDICATIONS, TOOL_MANAGEMENT } from './mapping.js';

/** The simulator's own namespace, where every instance NodeId lives. */
export const SIMULATOR_NS = 'urn:cnc-gateway:opcua-simulator';

/** Values a test may pin (or make Bad) to see them travel through subscriptions. */
export const PINNABLE = ['channelState', 'feedOverride'] as const;
export type Pinnable = (typeof PINNABLE)[number];

export interface SpaceNamespaces {
  sim: INamespace;
  mt: INamespace;
  machinery: INamespace;
  di: INamespace;
  channelStateType: string;
  channelModeType: string;
}

/** Simulator-namespace items a machine config maps through `driverOptions.nodes`. */
export const VENDOR_NODES = {
  feedRate: 'Monitoring.Channel1.ActualFeedRate',
  spindleSpeed: 'Monitoring.Spindle1.ActualSpeed',
  toolNumber: 'Monitoring.Channel1.ActiveToolNumber',
  operatingTime: 'Monitoring.MachineTool.OperatingTime',
  cuttingTime: 'Monitoring.MachineTool.CuttingTime',
  cycleTime: 'Monitoring.MachineTool.CycleTime',
} as const;

const CHANNEL_STATE_OF: Record<ExecutionState, number> = {
  RUNNING: CHANNEL_STATES.indexOf('Active'),
  HOLD: CHANNEL_STATES.indexOf('Interrupted'),
  STOPPED: CHANNEL_STATES.indexOf('Interrupted'),
  RESET: CHANNEL_STATES.indexOf('Reset'),
  EMERGENCY: CHANNEL_STATES.indexOf('Reset'),
};

const CHANNEL_MODE_OF: Record<OperatingMode, (typeof CHANNEL_MODES)[number]> = {
  AUTO: 'Automatic', MDI: 'MdaMdi', MANUAL: 'JogManual', JOG: 'JogManual', HANDLE: 'TeachingHandle',
  EDIT: 'Other', REF: 'Reference', REMOTE: 'Remote', UNKNOWN: 'Other',
};

const PROGRAM_STATE_OF: Record<ExecutionState, string> = {
  RUNNING: 'Running', HOLD: 'Interrupted', STOPPED: 'Interrupted', RESET: 'Ended', EMERGENCY: 'Aborted',
};

type Setter = (value: unknown, bad?: boolean) => void;

/** Builds one machine's nodes and returns the function that refreshes them from the model. */
export function buildMachineSpace(
  opcua: OpcuaModule,
  ns: SpaceNamespaces,
  machinesFolder: UAObject,
  machineID: string,
  machine: SimulatedMachine,
): { update: (pins: ReadonlyMap<Pinnable, number | 'bad'>) => void } {
  const { DataType, StatusCodes } = opcua;
  const id = (path: string) => `ns=${ns.sim.index};s=${machineID}.${path}`;
  const object = (parent: UAObject, path: string, name: string, owner: INamespace, notifier = false): UAObject =>
    ns.sim.addObject({
      nodeId: id(path),
      browseName: { name, namespaceIndex: owner.index },
      componentOf: parent,
      ...(notifier ? { eventNotifier: 1 } : {}),
    });
  const variable = (parent: UAObject | UAVariable, path: string, name: string, owner: INamespace | 0, dataType: string, initial: unknown, property = false): Setter => {
    const node = ns.sim.addVariable({
      nodeId: id(path),
      browseName: { name, namespaceIndex: owner === 0 ? 0 : owner.index },
      dataType,
      ...(property ? { propertyOf: parent } : { componentOf: parent }),
    });
    const wire = dataType === ns.channelStateType || dataType === ns.channelModeType ? 'Int32' : dataType;
    const set: Setter = (value, bad = false) => {
      node.setValueFromSource({ dataType: DataType[wire as keyof typeof DataType], value }, bad ? StatusCodes.BadDeviceFailure : StatusCodes.Good);
    };
    set(initial);
    return set;
  };
  const text = (value: string) => new opcua.LocalizedText({ text: value, locale: 'en' });

  const root = ns.sim.addObject({ nodeId: id('Machine'), browseName: { name: machineID, namespaceIndex: ns.sim.index }, organizedBy: machinesFolder });
  const identification = object(root, 'Identification', 'Identification', ns.di);
  variable(identification, 'Identification.Manufacturer', 'Manufacturer', ns.di, 'LocalizedText', text(machine.spec.system), true);
  variable(identification, 'Identification.Model', 'Model', ns.di, 'LocalizedText', text(`${machine.spec.machineType} simulator`), true);
  variable(identification, 'Identification.SerialNumber', 'SerialNumber', ns.di, 'String', `SIM-${machine.spec.seed}`, true);
  variable(identification, 'Identification.ComponentName', 'ComponentName', ns.di, 'LocalizedText', text(machineID), true);

  const monitoring = object(root, 'Monitoring', 'Monitoring', ns.mt);
  const machineTool = object(monitoring, 'Monitoring.MachineTool', 'MachineTool', ns.mt);
  const powerOn = variable(machineTool, 'Monitoring.MachineTool.PowerOnDuration', 'PowerOnDuration', ns.mt, 'UInt32', 0);
  const operating = variable(machineTool, VENDOR_NODES.operatingTime, 'OperatingTime', ns.sim, 'Double', 0);
  const cutting = variable(machineTool, VENDOR_NODES.cuttingTime, 'CuttingTime', ns.sim, 'Double', 0);
  const cycle = variable(machineTool, VENDOR_NODES.cycleTime, 'CycleTime', ns.sim, 'Double', 0);
  const channel = object(monitoring, 'Monitoring.Channel1', 'Channel1', ns.sim);
  variable(channel, 'Monitoring.Channel1.Name', 'Name', ns.mt, 'String', 'Channel 1', true);
  const channelState = variable(channel, 'Monitoring.Channel1.ChannelState', 'ChannelState', ns.mt, ns.channelStateType, 2);
  const channelMode = variable(channel, 'Monitoring.Channel1.ChannelMode', 'ChannelMode', ns.mt, ns.channelModeType, 0);
  const feedOverride = variable(channel, 'Monitoring.Channel1.FeedOverride', 'FeedOverride', ns.mt, 'Double', 100);
  const rapidOverride = variable(channel, 'Monitoring.Channel1.RapidOverride', 'RapidOverride', ns.mt, 'Double', 100);
  const feedRate = variable(channel, VENDOR_NODES.feedRate, 'ActualFeedRate', ns.sim, 'Double', 0);
  const toolNumber = variable(channel, VENDOR_NODES.toolNumber, 'ActiveToolNumber', ns.sim, 'UInt32', 0);
  const spindle = object(monitoring, 'Monitoring.Spindle1', 'Spindle1', ns.sim);
  variable(spindle, 'Monitoring.Spindle1.Name', 'Name', ns.mt, 'String', 'Spindle 1', true);
  const isRotating = variable(spindle, 'Monitoring.Spindle1.IsRotating', 'IsRotating', ns.mt, 'Boolean', false);
  const spindleOverride = variable(spindle, 'Monitoring.Spindle1.Override', 'Override', ns.mt, 'Double', 100);
  const spindleSpeed = variable(spindle, VENDOR_NODES.spindleSpeed, 'ActualSpeed', ns.sim, 'Double', 0);

  const production = object(root, 'Production', 'Production', ns.mt);
  const active = object(production, 'Production.ActiveProgram', 'ActiveProgram', ns.mt);
  const programName = variable(active, 'Production.ActiveProgram.Name', 'Name', ns.mt, 'String', '', true);
  variable(active, 'Production.ActiveProgram.NumberInList', 'NumberInList', 0, 'UInt16', 0, true);
  const state = object(active, 'Production.ActiveProgram.State', 'State', ns.mt);
  const programState = variable(state, 'Production.ActiveProgram.State.CurrentState', 'CurrentState', 0, 'LocalizedText', text('Initializing'));
  const plan = object(production, 'Production.ProductionPlan', 'ProductionPlan', ns.mt);
  const job = object(plan, 'Production.ProductionPlan.Job1', 'Job1', ns.sim);
  variable(job, 'Production.ProductionPlan.Job1.Identifier', 'Identifier', ns.mt, 'String', 'JOB-1', true);
  const partsCompleted = variable(job, 'Production.ProductionPlan.Job1.PartsCompleted', 'PartsCompleted', ns.mt, 'UInt32', 0);
  const statistics = object(production, 'Production.Statistics', 'Statistics', ns.mt);
  const partsTotal = variable(statistics, 'Production.Statistics.PartsProducedInLifetime', 'PartsProducedInLifetime', ns.mt, 'UInt32', 0);

  const notification = object(root, 'Notification', 'Notification', ns.mt);
  const messages = object(notification, 'Notification.Messages', 'Messages', ns.mt, true);
  const condition = (name: string) => {
    const node = object(messages, `Notification.Messages.${name}`, name, ns.sim);
    const base = `Notification.Messages.${name}`;
    const activeState = ns.sim.addVariable({ nodeId: id(`${base}.ActiveState`), browseName: { name: 'ActiveState', namespaceIndex: 0 }, dataType: 'LocalizedText', componentOf: node });
    return {
      activeText: (active: boolean) => activeState.setValueFromSource({ dataType: DataType.LocalizedText, value: text(active ? 'Active' : 'Inactive') }),
      active: variable(activeState, `${base}.ActiveState.Id`, 'Id', 0, 'Boolean', false, true),
      conditionName: variable(node, `${base}.ConditionName`, 'ConditionName', 0, 'String', name, true),
      message: variable(node, `${base}.Message`, 'Message', 0, 'LocalizedText', text('')),
      severity: variable(node, `${base}.Severity`, 'Severity', 0, 'UInt16', 0),
      time: variable(node, `${base}.Time`, 'Time', 0, 'DateTime', new Date(0)),
    };
  };
  const alarmCondition = condition('Alarm');
  const warningCondition = condition('Warning');

  const equipment = object(root, 'Equipment', 'Equipment', ns.mt);
  const toolList = object(equipment, 'Equipment.Tools', 'Tools', ns.mt);
  const toolLife = machine.toolLife();
  const lifeSetters = toolLife.map((record) => {
    const base = `Equipment.Tools.T${record.toolNum}`;
    const tool = object(toolList, base, `T${record.toolNum}`, ns.sim);
    variable(tool, `${base}.Identifier`, 'Identifier', ns.mt, 'String', `T${record.toolNum}`, true);
    variable(tool, `${base}.ControlIdentifier1`, 'ControlIdentifier1', ns.mt, 'UInt32', record.groupNum);
    variable(tool, `${base}.ControlIdentifier2`, 'ControlIdentifier2', ns.mt, 'UInt32', record.toolNum);
    variable(tool, `${base}.ControlIdentifierInterpretation`, 'ControlIdentifierInterpretation', ns.mt, 'Int32', TOOL_MANAGEMENT.indexOf('GroupBased'));
    variable(tool, `${base}.Locked`, 'Locked', ns.mt, 'Boolean', false);
    const life = object(tool, `${base}.ToolLife`, 'ToolLife', ns.mt);
    const value = ns.sim.addVariable({ nodeId: id(`${base}.ToolLife.Parts`), browseName: { name: 'Parts', namespaceIndex: ns.sim.index }, dataType: 'Double', componentOf: life });
    const lifeProp = (name: string, dataType: string, v: unknown) => variable(value, `${base}.ToolLife.Parts.${name}`, name, ns.mt, dataType, v, true);
    lifeProp('Indication', 'Int32', TOOL_LIFE_INDICATIONS.indexOf('NumberOfParts'));
    lifeProp('IsCountingUp', 'Boolean', true);
    lifeProp('StartValue', 'Double', 0);
    const limit = lifeProp('LimitValue', 'Double', record.limit);
    return (used: number, limitValue: number) => {
      value.setValueFromSource({ dataType: DataType.Double, value: used });
      limit(limitValue);
    };
  });

  return {
    update(pins) {
      const status = machine.status();
      const fs = machine.feedAndSpindle();
      const time = machine.timeData();
      const count = machine.count();
      const pinned = (item: Pinnable, set: Setter, value: number) => {
        const pin = pins.get(item);
        set(pin === undefined || pin === 'bad' ? value : pin, pin === 'bad');
      };
      pinned('channelState', channelState, CHANNEL_STATE_OF[status.adjustedStatus]);
      channelMode(CHANNEL_MODES.indexOf(CHANNEL_MODE_OF[status.mode]));
      pinned('feedOverride', feedOverride, fs.feedOverride);
      rapidOverride(fs.rapidOverride);
      feedRate(fs.feedRate);
      spindleOverride(fs.spindleOverride);
      spindleSpeed(fs.spindleSpeed);
      isRotating(fs.spindleSpeed > 0);
      toolNumber(machine.toolNumber().toolNumber);
      powerOn(Math.floor(time.powerOnTime / 3600));
      operating(time.operatingTime);
      cutting(time.cuttingTime);
      cycle(time.cycleTime);
      programName(status.program ?? '');
      programState(text(PROGRAM_STATE_OF[status.adjustedStatus]));
      partsCompleted(count.partCount);
      partsTotal(count.partsTotal);
      const alarms = machine.alarms();
      const severe = alarms.find((a) => a.level !== 'warning');
      const warning = alarms.find((a) => a.level === 'warning');
      for (const [c, alarm, severity] of [[alarmCondition, severe, severe?.level === 'emergency' ? 1000 : 700], [warningCondition, warning, 300]] as const) {
        c.active(alarm !== undefined);
        c.activeText(alarm !== undefined);
        if (!alarm) continue;
        c.conditionName(alarm.code);
        c.message(text(alarm.message));
        c.severity(severity);
        c.time(new Date(alarm.since));
      }
      machine.toolLife().forEach((record, i) => lifeSetters[i]?.(record.used, record.limit));
    },
  };
}
