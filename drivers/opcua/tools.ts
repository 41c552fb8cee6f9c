/**
 * Tool life from Equipment/Tools: the tool list is browsed on the first
 * toolLife read of a session, then each read fetches all tool values in one
 * Read request.
 */
import type { ReadOptions, ToolLifeRecord } from '../../core/driver-seam/driver.js';
import type { AddressSpaceBrowser } from './address-space.js';
import type { OpcuaLink } from './connection.js';
import { MACHINE_TOOL_NS, toToolLifeRecord, type ToolLifeReading, type ToolReading } from './mapping.js';
import { numberOf } from './readings.js';

interface LifeNodes {
  value: string;
  indication: string;
  isCountingUp: string;
  limitValue: string | undefined;
  startValue: string | undefined;
  engineeringUnits: string | undefined;
}

interface ToolNodes {
  controlIdentifier1: string;
  controlIdentifier2: string | undefined;
  interpretation: string | undefined;
  life: LifeNodes[];
}


export class ToolList {
  private tools: ToolNodes[] | undefined;

  constructor(
    private readonly link: OpcuaLink,
    private readonly browser: AddressSpaceBrowser,
    private readonly toolsNodeId: string,
  ) {}

  async read(filter: ReadOptions): Promise<ToolLifeRecord[]> {
    const tools = (this.tools ??= await this.browse());
    const order: string[] = [];
    const slot = (nodeId: string | undefined) => (nodeId === undefined ? -1 : order.push(nodeId) - 1);
    const plan = tools.map((t) => ({
      ci1: slot(t.controlIdentifier1),
      ci2: slot(t.controlIdentifier2),
      interpretation: slot(t.interpretation),
      life: t.life.map((l) => ({
        value: slot(l.value), indication: slot(l.indication), isCountingUp: slot(l.isCountingUp),
        limitValue: slot(l.limitValue), startValue: slot(l.startValue), engineeringUnits: slot(l.engineeringUnits),
      })),
    }));
    const values = await this.link.readValues('read tool list', order);
    const at = (i: number) => (i < 0 ? undefined : values[i]);
    const records: ToolLifeRecord[] = [];
    for (const p of plan) {
      const ci1 = numberOf(at(p.ci1));
      if (ci1 === undefined) continue;
      const life: ToolLifeReading[] = [];
      for (const l of p.life) {
        const value = numberOf(at(l.value));
        const indication = numberOf(at(l.indication));
        if (value === undefined || indication === undefined) continue;
        const units: unknown = at(l.engineeringUnits)?.value.value;
        life.push({
          value,
          indication,
          isCountingUp: at(l.isCountingUp)?.value.value === true,
          limitValue: numberOf(at(l.limitValue)),
          startValue: numberOf(at(l.startValue)),
          unitId: units && typeof units === 'object' && 'unitId' in units && typeof units.unitId === 'number' ? units.unitId : undefined,
        });
      }
      const reading: ToolReading = { controlIdentifier1: ci1, controlIdentifier2: numberOf(at(p.ci2)), interpretation: numberOf(at(p.interpretation)), life };
      const record = toToolLifeRecord(reading);
      if (!record) continue;
      if (filter.toolNum !== undefined && filter.toolNum !== record.toolNum) continue;
      if (filter.groupNum !== undefined && filter.groupNum !== record.groupNum) continue;
      records.push(record);
    }
    return records;
  }

  private async browse(): Promise<ToolNodes[]> {
    const { uris } = await this.browser.namespaces();
    const mt = uris.indexOf(MACHINE_TOOL_NS);
    const tools: ToolNodes[] = [];
    for (const tool of await this.browser.children(this.toolsNodeId)) {
      const kids = await this.browser.children(tool.nodeId);
      const pick = (name: string) => kids.find((k) => k.ns === mt && k.name === name)?.nodeId;
      const controlIdentifier1 = pick('ControlIdentifier1');
      if (!controlIdentifier1) continue;
      const life: LifeNodes[] = [];
      const lifeFolder = pick('ToolLife');
      for (const entry of lifeFolder ? await this.browser.children(lifeFolder) : []) {
        const props = await this.browser.children(entry.nodeId);
        const prop = (name: string) => props.find((k) => k.ns === mt && k.name === name)?.nodeId;
        const indication = prop('Indication');
        const isCountingUp = prop('IsCountingUp');
        if (!indication || !isCountingUp) continue;
        life.push({ value: entry.nodeId, indication, isCountingUp, limitValue: prop('LimitValue'), startValue: prop('StartValue'), engineeringUnits: prop('EngineeringUnits') });
      }
      tools.push({ controlIdentifier1, controlIdentifier2: pick('ControlIdentifier2'), interpretation: pick('ControlIdentifierInterpretation'), life });
    }
    return tools;
  }
}
