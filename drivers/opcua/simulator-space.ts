/**
 * The address space of one simulated machine tool, built in code after OPC
 * 40501: Objects/Machines/<machineID>/{Identification, Monitoring, Production,
 * Notification, Equipment}, BrowseNames in the DI / Machinery / MachineTool
 * namespaces, NodeIds in the simulator's own namespace. A few values the model
 * lacks (actual feed and speed, active tool, timers) sit in the simulator's
 * namespace, as a vendor's server would add them.
 */
import type { INamespace, UAObject, UAVariable } from 'node-opcua';
import type { ActiveAlarm, ExecutionState, OperatingMode } from '../../core/driver-seam/driver.js';
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
type Text = InstanceType<OpcuaModule['LocalizedText']>;

/** Adds one machine's nodes to the simulator's namespace, each NodeId named after its path below the machine. */
class NodeMaker {
  constructor(
    private readonly opcua: OpcuaModule,
    readonly ns: SpaceNamespaces,
    private readonly machineID: string,
  ) {}

  id(path: string): string {
    return `ns=${this.ns.sim.index};s=${this.machineID}.${path}`;
  }

  text(value: string): Text {
    return new this.opcua.LocalizedText({ text: value, locale: 'en' });
  }

  object(parent: UAObject, path: string, name: string, owner: INamespace, notifier = false): UAObject {
    return this.ns.sim.addObject({
      nodeId: this.id(path),
      browseName: { name, namespaceIndex: owner.index },
      componentOf: parent,
      ...(notifier ? { eventNotifier: 1 } : {}),
    });
  }

  /** A variable (or a property, with `property`) holding `initial`; returns its setter. */
  variable(parent: UAObject | UAVariable, path: string, name: string, owner: INamespace | 0, dataType: string, initial: unknown, property = false): Setter {
    const node = this.plainVariable(parent, path, name, owner, dataType, property);
    const { DataType, StatusCodes } = this.opcua;
    const wire = dataType === this.ns.channelStateType || dataType === this.ns.channelModeType ? 'Int32' : dataType;
    const set: Setter = (value, bad = false) => {
      node.setValueFromSource({ dataType: DataType[wire as keyof typeof DataType], value }, bad ? StatusCodes.BadDeviceFailure : StatusCodes.Good);
    };
    set(initial);
    return set;
  }

  /** A variable without a value yet, for one that has properties of its own. */
  plainVariable(parent: UAObject | UAVariable, path: string, name: string, owner: INamespace | 0, dataType: string, property = false): UAVariable {
    return this.ns.sim.addVariable({
      nodeId: this.id(path),
      browseName: { name, namespaceIndex: owner === 0 ? 0 : owner.index },
      dataType,
      ...(property ? { propertyOf: parent } : { componentOf: parent }),
    });
  }

  /** Sets a LocalizedText variable made with `plainVariable`. */
  setText(node: UAVariable, value: string): void {
    node.setValueFromSource({ dataType: this.opcua.DataType.LocalizedText, value: this.text(value) });
  }

  /** Sets a Double variable made with `plainVariable`. */
  setDouble(node: UAVariable, value: number): void {
    node.setValueFromSource({ dataType: this.opcua.DataType.Double, value });
  }
}

/** Identification (OPC 10000-100 DI): fixed for the life of the machine. */
function addIdentification(make: NodeMaker, root: UAObject, machineID: string, machine: SimulatedMachine): void {
  const { di } = make.ns;
  const identification = make.object(root, 'Identification', 'Identification', di);
  make.variable(identification, 'Identification.Manufacturer', 'Manufacturer', di, 'LocalizedText', make.text(machine.spec.system), true);
  make.variable(identification, 'Identification.Model', 'Model', di, 'LocalizedText', make.text(`${machine.spec.machineType} simulator`), true);
  make.variable(identification, 'Identification.SerialNumber', 'SerialNumber', di, 'String', `SIM-${machine.spec.seed}`, true);
  make.variable(identification, 'Identification.ComponentName', 'ComponentName', di, 'LocalizedText', make.text(machineID), true);
}

/** Monitoring: the machine tool's timers, channel 1 and spindle 1; returns the setters `update` feeds. */
function addMonitoring(make: NodeMaker, root: UAObject) {
  const { mt, sim, channelStateType, channelModeType } = make.ns;
  const monitoring = make.object(root, 'Monitoring', 'Monitoring', mt);
  const machineTool = make.object(monitoring, 'Monitoring.MachineTool', 'MachineTool', mt);
  const powerOn = make.variable(machineTool, 'Monitoring.MachineTool.PowerOnDuration', 'PowerOnDuration', mt, 'UInt32', 0);
  const operating = make.variable(machineTool, VENDOR_NODES.operatingTime, 'OperatingTime', sim, 'Double', 0);
  const cutting = make.variable(machineTool, VENDOR_NODES.cuttingTime, 'CuttingTime', sim, 'Double', 0);
  const cycle = make.variable(machineTool, VENDOR_NODES.cycleTime, 'CycleTime', sim, 'Double', 0);
  const channel = make.object(monitoring, 'Monitoring.Channel1', 'Channel1', sim);
  make.variable(channel, 'Monitoring.Channel1.Name', 'Name', mt, 'String', 'Channel 1', true);
  const channelState = make.variable(channel, 'Monitoring.Channel1.ChannelState', 'ChannelState', mt, channelStateType, 2);
  const channelMode = make.variable(channel, 'Monitoring.Channel1.ChannelMode', 'ChannelMode', mt, channelModeType, 0);
  const feedOverride = make.variable(channel, 'Monitoring.Channel1.FeedOverride', 'FeedOverride', mt, 'Double', 100);
  const rapidOverride = make.variable(channel, 'Monitoring.Channel1.RapidOverride', 'RapidOverride', mt, 'Double', 100);
  const feedRate = make.variable(channel, VENDOR_NODES.feedRate, 'ActualFeedRate', sim, 'Double', 0);
  const toolNumber = make.variable(channel, VENDOR_NODES.toolNumber, 'ActiveToolNumber', sim, 'UInt32', 0);
  const spindle = make.object(monitoring, 'Monitoring.Spindle1', 'Spindle1', sim);
  make.variable(spindle, 'Monitoring.Spindle1.Name', 'Name', mt, 'String', 'Spindle 1', true);
  const isRotating = make.variable(spindle, 'Monitoring.Spindle1.IsRotating', 'IsRotating', mt, 'Boolean', false);
  const spindleOverride = make.variable(spindle, 'Monitoring.Spindle1.Override', 'Override', mt, 'Double', 100);
  const spindleSpeed = make.variable(spindle, VENDOR_NODES.spindleSpeed, 'ActualSpeed', sim, 'Double', 0);
  return { powerOn, operating, cutting, cycle, channelState, channelMode, feedOverride, rapidOverride, feedRate, toolNumber, isRotating, spindleOverride, spindleSpeed };
}

/** Production: the active program and its state, the job's and the lifetime's part counters. */
function addProduction(make: NodeMaker, root: UAObject) {
  const { mt, sim } = make.ns;
  const production = make.object(root, 'Production', 'Production', mt);
  const active = make.object(production, 'Production.ActiveProgram', 'ActiveProgram', mt);
  const programName = make.variable(active, 'Production.ActiveProgram.Name', 'Name', mt, 'String', '', true);
  make.variable(active, 'Production.ActiveProgram.NumberInList', 'NumberInList', 0, 'UInt16', 0, true);
  const state = make.object(active, 'Production.ActiveProgram.State', 'State', mt);
  const programState = make.variable(state, 'Production.ActiveProgram.State.CurrentState', 'CurrentState', 0, 'LocalizedText', make.text('Initializing'));
  const plan = make.object(production, 'Production.ProductionPlan', 'ProductionPlan', mt);
  const job = make.object(plan, 'Production.ProductionPlan.Job1', 'Job1', sim);
  make.variable(job, 'Production.ProductionPlan.Job1.Identifier', 'Identifier', mt, 'String', 'JOB-1', true);
  const partsCompleted = make.variable(job, 'Production.ProductionPlan.Job1.PartsCompleted', 'PartsCompleted', mt, 'UInt32', 0);
  const statistics = make.object(production, 'Production.Statistics', 'Statistics', mt);
  const partsTotal = make.variable(statistics, 'Production.Statistics.PartsProducedInLifetime', 'PartsProducedInLifetime', mt, 'UInt32', 0);
  return { programName, programState, partsCompleted, partsTotal };
}

/** One condition under Notification/Messages, as its fields' setters. */
function addCondition(make: NodeMaker, messages: UAObject, name: string) {
  const base = `Notification.Messages.${name}`;
  const node = make.object(messages, base, name, make.ns.sim);
  const activeState = make.plainVariable(node, `${base}.ActiveState`, 'ActiveState', 0, 'LocalizedText');
  return {
    activeText: (active: boolean) => make.setText(activeState, active ? 'Active' : 'Inactive'),
    active: make.variable(activeState, `${base}.ActiveState.Id`, 'Id', 0, 'Boolean', false, true),
    conditionName: make.variable(node, `${base}.ConditionName`, 'ConditionName', 0, 'String', name, true),
    message: make.variable(node, `${base}.Message`, 'Message', 0, 'LocalizedText', make.text('')),
    severity: make.variable(node, `${base}.Severity`, 'Severity', 0, 'UInt16', 0),
    time: make.variable(node, `${base}.Time`, 'Time', 0, 'DateTime', new Date(0)),
  };
}
type Condition = ReturnType<typeof addCondition>;

/** Notification: two conditions, the most severe active alarm and the first active warning. */
function addNotification(make: NodeMaker, root: UAObject): { alarm: Condition; warning: Condition } {
  const notification = make.object(root, 'Notification', 'Notification', make.ns.mt);
  const messages = make.object(notification, 'Notification.Messages', 'Messages', make.ns.mt, true);
  return { alarm: addCondition(make, messages, 'Alarm'), warning: addCondition(make, messages, 'Warning') };
}

/** Equipment: one tool per tool-life record, counting parts up to its limit; returns one setter per tool. */
function addEquipment(make: NodeMaker, root: UAObject, machine: SimulatedMachine): Array<(used: number, limit: number) => void> {
  const { mt, sim } = make.ns;
  const equipment = make.object(root, 'Equipment', 'Equipment', mt);
  const toolList = make.object(equipment, 'Equipment.Tools', 'Tools', mt);
  return machine.toolLife().map((record) => {
    const base = `Equipment.Tools.T${record.toolNum}`;
    const tool = make.object(toolList, base, `T${record.toolNum}`, sim);
    make.variable(tool, `${base}.Identifier`, 'Identifier', mt, 'String', `T${record.toolNum}`, true);
    make.variable(tool, `${base}.ControlIdentifier1`, 'ControlIdentifier1', mt, 'UInt32', record.groupNum);
    make.variable(tool, `${base}.ControlIdentifier2`, 'ControlIdentifier2', mt, 'UInt32', record.toolNum);
    make.variable(tool, `${base}.ControlIdentifierInterpretation`, 'ControlIdentifierInterpretation', mt, 'Int32', TOOL_MANAGEMENT.indexOf('GroupBased'));
    make.variable(tool, `${base}.Locked`, 'Locked', mt, 'Boolean', false);
    const life = make.object(tool, `${base}.ToolLife`, 'ToolLife', mt);
    const value = make.plainVariable(life, `${base}.ToolLife.Parts`, 'Parts', sim, 'Double');
    const lifeProp = (name: string, dataType: string, v: unknown) => make.variable(value, `${base}.ToolLife.Parts.${name}`, name, mt, dataType, v, true);
    lifeProp('Indication', 'Int32', TOOL_LIFE_INDICATIONS.indexOf('NumberOfParts'));
    lifeProp('IsCountingUp', 'Boolean', true);
    lifeProp('StartValue', 'Double', 0);
    const limit = lifeProp('LimitValue', 'Double', record.limit);
    return (used: number, limitValue: number) => {
      make.setDouble(value, used);
      limit(limitValue);
    };
  });
}

/** Sets the two conditions from the model's active alarms. */
function updateConditions(make: NodeMaker, conditions: { alarm: Condition; warning: Condition }, alarms: readonly ActiveAlarm[]): void {
  const severe = alarms.find((a) => a.level !== 'warning');
  const warning = alarms.find((a) => a.level === 'warning');
  for (const [c, alarm, severity] of [[conditions.alarm, severe, severe?.level === 'emergency' ? 1000 : 700], [conditions.warning, warning, 300]] as const) {
    c.active(alarm !== undefined);
    c.activeText(alarm !== undefined);
    if (!alarm) continue;
    c.conditionName(alarm.code);
    c.message(make.text(alarm.message));
    c.severity(severity);
    c.time(new Date(alarm.since));
  }
}

/** Builds one machine's nodes and returns the function that refreshes them from the model. */
export function buildMachineSpace(
  opcua: OpcuaModule,
  ns: SpaceNamespaces,
  machinesFolder: UAObject,
  machineID: string,
  machine: SimulatedMachine,
): { root: UAObject; update: (pins: ReadonlyMap<Pinnable, number | 'bad'>) => void } {
  const make = new NodeMaker(opcua, ns, machineID);
  const root = ns.sim.addObject({ nodeId: make.id('Machine'), browseName: { name: machineID, namespaceIndex: ns.sim.index }, organizedBy: machinesFolder });
  addIdentification(make, root, machineID, machine);
  const m = addMonitoring(make, root);
  const p = addProduction(make, root);
  const conditions = addNotification(make, root);
  const tools = addEquipment(make, root, machine);

  return {
    root,
    update(pins) {
      const status = machine.status();
      const fs = machine.feedAndSpindle();
      const time = machine.timeData();
      const count = machine.count();
      const pinned = (item: Pinnable, set: Setter, value: number) => {
        const pin = pins.get(item);
        set(pin === undefined || pin === 'bad' ? value : pin, pin === 'bad');
      };
      pinned('channelState', m.channelState, CHANNEL_STATE_OF[status.adjustedStatus]);
      m.channelMode(CHANNEL_MODES.indexOf(CHANNEL_MODE_OF[status.mode]));
      pinned('feedOverride', m.feedOverride, fs.feedOverride);
      m.rapidOverride(fs.rapidOverride);
      m.feedRate(fs.feedRate);
      m.spindleOverride(fs.spindleOverride);
      m.spindleSpeed(fs.spindleSpeed);
      m.isRotating(fs.spindleSpeed > 0);
      m.toolNumber(machine.toolNumber().toolNumber);
      m.powerOn(Math.floor(time.powerOnTime / 3600));
      m.operating(time.operatingTime);
      m.cutting(time.cuttingTime);
      m.cycle(time.cycleTime);
      p.programName(status.program ?? '');
      p.programState(make.text(PROGRAM_STATE_OF[status.adjustedStatus]));
      p.partsCompleted(count.partCount);
      p.partsTotal(count.partsTotal);
      updateConditions(make, conditions, machine.alarms());
      machine.toolLife().forEach((record, i) => tools[i]?.(record.used, record.limit));
    },
  };
}
