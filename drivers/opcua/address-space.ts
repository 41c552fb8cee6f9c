/**
 * Finds a machine tool in a server's address space by browsing OPC 40501
 * BrowseNames, with namespaces resolved by URI, and applies the machine
 * config's explicit NodeId map on top. The result says which NodeId serves
 * which item, so the client never hard-codes a server's NodeIds.
 */
import { GatewayError } from '../../core/interfaces/errors.js';
import type { OpcuaLink } from './connection.js';
import { DI_NS, MACHINERY_NS, MACHINE_TOOL_NS } from './mapping.js';
import { textOf } from './text-value.js';
import { NODE_ITEMS, type NodeMap, type OpcuaOptions } from './options.js';

const OBJECTS_FOLDER = 'i=85';
const NAMESPACE_ARRAY = 'i=2255';
const HIERARCHICAL_REFERENCES = 'i=33';

/** A child found by browsing: its NodeId and BrowseName. */
export interface ChildRef {
  nodeId: string;
  ns: number;
  name: string;
  /** NodeId of its TypeDefinition (`i=0` for a method). */
  type: string;
}

/** The NodeIds of one condition instance under Notification/Messages. */
export interface ConditionNodes {
  code: string;
  activeId: string;
  message: string | undefined;
  severity: string | undefined;
  time: string | undefined;
  conditionName: string | undefined;
}

export interface MachineLayout {
  /** BrowseName of the machine object, when the model was found. */
  machine: string | undefined;
  /** NodeId of the machine object, when the model was found. */
  machineNodeId: string | undefined;
  nodes: NodeMap;
  /** Factors turning a node's value into the family's unit (PowerOnDuration is in hours). */
  scale: Partial<Record<keyof NodeMap, number>>;
  conditions: ConditionNodes[];
}

/** Namespace indexes of the companion specifications on this server; undefined when absent. */
interface Namespaces {
  uris: string[];
  mt: number | undefined;
  machinery: number | undefined;
  di: number | undefined;
}

export class AddressSpaceBrowser {
  private ns: Namespaces = { uris: [], mt: undefined, machinery: undefined, di: undefined };

  constructor(private readonly link: OpcuaLink) {}

  async namespaces(): Promise<Namespaces> {
    const [array] = await this.link.readValues('read NamespaceArray', [NAMESPACE_ARRAY]);
    const uris = Array.isArray(array?.value.value) ? (array.value.value as unknown[]).map(String) : [];
    const index = (uri: string) => (uris.indexOf(uri) >= 0 ? uris.indexOf(uri) : undefined);
    this.ns = { uris, mt: index(MACHINE_TOOL_NS), machinery: index(MACHINERY_NS), di: index(DI_NS) };
    return this.ns;
  }

  /** `nsu=<uri>;…` NodeIds become `ns=<index>;…` on this server. */
  resolveNodeId(nodeId: string): string {
    const match = /^nsu=([^;]+);(.*)$/.exec(nodeId);
    if (!match) return nodeId;
    const index = this.ns.uris.indexOf(match[1] ?? '');
    if (index < 0) throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: namespace '${match[1]}' of NodeId '${nodeId}' is not on this server`);
    return `ns=${index};${match[2]}`;
  }

  async children(nodeId: string): Promise<ChildRef[]> {
    const result = await this.link.request(`browse ${nodeId}`, (session) =>
      session.browse({ nodeId, browseDirection: 0, referenceTypeId: HIERARCHICAL_REFERENCES, includeSubtypes: true, nodeClassMask: 0, resultMask: 0x3f }),
    );
    return (result.references ?? []).map((r) => ({
      nodeId: r.nodeId.toString(), ns: r.browseName.namespaceIndex, name: r.browseName.name ?? '', type: r.typeDefinition.toString(),
    }));
  }

  async child(nodeId: string | undefined, ns: number | undefined, name: string): Promise<ChildRef | undefined> {
    if (nodeId === undefined || ns === undefined) return undefined;
    return (await this.children(nodeId)).find((c) => c.ns === ns && c.name === name);
  }

  /** Finds the machine and maps every item the model provides, then applies `options.nodes`. */
  async layout(options: OpcuaOptions): Promise<MachineLayout> {
    const ns = await this.namespaces();
    const layout: MachineLayout = { machine: undefined, machineNodeId: undefined, nodes: {}, scale: {}, conditions: [] };
    const machine = await this.findMachine(options.machine);
    if (machine) {
      layout.machine = machine.name;
      layout.machineNodeId = machine.nodeId;
      await this.mapMonitoring(machine, options, layout);
      await this.mapProduction(machine, layout);
      const notification = await this.child(machine.nodeId, ns.mt, 'Notification');
      const messages = await this.child(notification?.nodeId, ns.mt, 'Messages');
      if (messages) layout.nodes.messages = messages.nodeId;
      const equipment = await this.child(machine.nodeId, ns.mt, 'Equipment');
      const tools = await this.child(equipment?.nodeId, ns.mt, 'Tools');
      if (tools) layout.nodes.tools = tools.nodeId;
    } else if (options.machine !== undefined) {
      throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: no machine '${options.machine}' under Objects/Machines (driverOptions.machine)`);
    }
    for (const item of NODE_ITEMS) {
      const explicit = options.nodes[item];
      if (explicit === undefined) continue;
      layout.nodes[item] = this.resolveNodeId(explicit);
      delete layout.scale[item];
    }
    if (layout.nodes.messages) layout.conditions = await this.conditions(layout.nodes.messages);
    return layout;
  }

  private async findMachine(wanted: string | undefined): Promise<ChildRef | undefined> {
    const machines = await this.child(OBJECTS_FOLDER, this.ns.machinery, 'Machines');
    if (!machines) return undefined;
    const candidates = await this.children(machines.nodeId);
    if (wanted === undefined) return candidates[0];
    const byName = candidates.find((c) => c.name === wanted);
    if (byName) return byName;
    for (const candidate of candidates) {
      const identification = await this.child(candidate.nodeId, this.ns.di, 'Identification');
      const componentName = await this.child(identification?.nodeId, this.ns.di, 'ComponentName');
      if (!componentName) continue;
      const [value] = await this.link.readValues('read ComponentName', [componentName.nodeId]);
      if (value && textOf(value) === wanted) return candidate;
    }
    return undefined;
  }

  private async mapMonitoring(machine: ChildRef, options: OpcuaOptions, layout: MachineLayout): Promise<void> {
    const { mt } = this.ns;
    const monitoring = await this.child(machine.nodeId, mt, 'Monitoring');
    if (!monitoring) return;
    const elements = await this.children(monitoring.nodeId);
    let channel: ChildRef[] | undefined;
    let spindle: ChildRef[] | undefined;
    for (const element of elements) {
      if (channel && spindle) break;
      const wantChannel = !channel && (options.channel === undefined || options.channel === element.name);
      const wantSpindle = !spindle && (options.spindle === undefined || options.spindle === element.name);
      if (!wantChannel && !wantSpindle) continue;
      const kids = await this.children(element.nodeId);
      const has = (name: string) => kids.some((k) => k.ns === mt && k.name === name);
      if (wantChannel && has('ChannelState')) channel = kids;
      else if (wantSpindle && has('IsRotating')) spindle = kids;
    }
    const pick = (kids: ChildRef[] | undefined, name: string) => kids?.find((k) => k.ns === mt && k.name === name)?.nodeId;
    setIf(layout.nodes, 'channelState', pick(channel, 'ChannelState'));
    setIf(layout.nodes, 'channelMode', pick(channel, 'ChannelMode'));
    setIf(layout.nodes, 'feedOverride', pick(channel, 'FeedOverride'));
    setIf(layout.nodes, 'rapidOverride', pick(channel, 'RapidOverride'));
    setIf(layout.nodes, 'spindleOverride', pick(spindle, 'Override'));
    const machineTool = await this.child(monitoring.nodeId, mt, 'MachineTool');
    const powerOn = await this.child(machineTool?.nodeId, mt, 'PowerOnDuration');
    if (powerOn) {
      layout.nodes.powerOnTime = powerOn.nodeId;
      layout.scale.powerOnTime = 3600;
    }
  }

  private async mapProduction(machine: ChildRef, layout: MachineLayout): Promise<void> {
    const { mt } = this.ns;
    const production = await this.child(machine.nodeId, mt, 'Production');
    if (!production) return;
    const active = await this.child(production.nodeId, mt, 'ActiveProgram');
    setIf(layout.nodes, 'programName', (await this.child(active?.nodeId, mt, 'Name'))?.nodeId);
    const state = await this.child(active?.nodeId, mt, 'State');
    setIf(layout.nodes, 'programState', (await this.child(state?.nodeId, 0, 'CurrentState'))?.nodeId);
    const statistics = await this.child(production.nodeId, mt, 'Statistics');
    setIf(layout.nodes, 'partsTotal', (await this.child(statistics?.nodeId, mt, 'PartsProducedInLifetime'))?.nodeId);
    // The part counter of the first job of the production plan that counts parts.
    const plan = await this.child(production.nodeId, mt, 'ProductionPlan');
    for (const job of plan ? await this.children(plan.nodeId) : []) {
      const completed = await this.child(job.nodeId, mt, 'PartsCompleted');
      if (completed) {
        layout.nodes.partCount = completed.nodeId;
        break;
      }
    }
  }

  /** Condition instances (objects with ActiveState/Id) under the Messages object. */
  private async conditions(messagesNodeId: string): Promise<ConditionNodes[]> {
    const found: ConditionNodes[] = [];
    for (const candidate of await this.children(messagesNodeId)) {
      const kids = await this.children(candidate.nodeId);
      const std = (name: string) => kids.find((k) => k.ns === 0 && k.name === name)?.nodeId;
      const activeState = std('ActiveState');
      const activeId = activeState ? (await this.child(activeState, 0, 'Id'))?.nodeId : undefined;
      if (!activeId) continue;
      found.push({ code: candidate.name, activeId, message: std('Message'), severity: std('Severity'), time: std('Time'), conditionName: std('ConditionName') });
    }
    return found;
  }
}

function setIf(nodes: NodeMap, item: keyof NodeMap, nodeId: string | undefined): void {
  if (nodeId !== undefined) nodes[item] = nodeId;
}
