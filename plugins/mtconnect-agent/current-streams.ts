/**
 * /current of every device from DeviceStream parts kept per device: a
 * machine's part is written again only after the live state applied one of
 * its observations (or the device model changed), so /current of a thousand
 * machines joins a thousand kept strings instead of writing every
 * observation of every machine each time. Each part is kept encoded (UTF-8),
 * so the document is one copy of the kept bytes: its text is never encoded
 * again. Requests with a filter or `at=` are written whole (stream-reads.ts).
 */
import { deviceStreamJson } from './documents-json.js';
import { deviceStreamXml } from './documents-xml.js';
import { sortForPrinting } from './documents.js';
import type { LiveState } from './live-state.js';
import type { ComponentDef, DeviceModel } from './model.js';
import type { Served } from './served.js';
import { lastObservations } from './stream-reads.js';

/** The key of the Agent device's part (no machineID is empty). */
const AGENT = '';
/** The part of a device with no observation. */
const NOTHING = Buffer.alloc(0);

type Format = 'xml' | 'json';

export class CurrentStreams {
  private model: DeviceModel | undefined;
  private agentDevice: ComponentDef | undefined;
  /** The machineIDs (and AGENT) in the order their devices are printed. */
  private order: string[] = [];
  private readonly parts: Record<Format, Map<string, Buffer>> = { xml: new Map(), json: new Map() };
  private readonly unsubscribe: () => void;

  constructor(private readonly live: LiveState) {
    this.unsubscribe = live.onObservations((observations) => {
      // A machine's connection is shown in the Agent device (its Adapter): its change is the Agent's part's.
      for (const o of observations) this.forget(this.model?.byMachine.get(o.machineID)?.[o.item]?.parent.device === this.agentDevice ? AGENT : o.machineID);
    });
  }

  /** The DeviceStream parts of /current in `format`, in document order; `agent` is the Agent device's observation. */
  deviceStreams(format: Format, model: DeviceModel, agent: Served): Buffer[] {
    if (model !== this.model) this.reset(model);
    const kept = this.parts[format];
    const out: Buffer[] = [];
    for (const key of this.order) {
      let part = kept.get(key);
      if (part === undefined) {
        part = this.write(format, model, key, agent);
        kept.set(key, part);
      }
      if (part.length) out.push(part);
    }
    return out;
  }

  /**
   * A device's part: a machine's own observations; or the Agent's, with the
   * connection of every machine (its Adapter in the Agent device).
   */
  private write(format: Format, model: DeviceModel, key: string, agent: Served): Buffer {
    const agentDevice = this.agentDevice;
    const ofAgent = (id: string) => model.dataItems.get(id)?.parent.device === agentDevice;
    const served: Served[] = [];
    if (key === AGENT) {
      served.push(agent);
      for (const machineID of model.byMachine.keys()) lastObservations(model, this.live.replay(machineID), ofAgent, served);
    } else {
      lastObservations(model, this.live.replay(key), (id) => !ofAgent(id), served);
    }
    if (served.length === 0) return NOTHING;
    sortForPrinting(served);
    return Buffer.from(format === 'xml' ? deviceStreamXml(served) : deviceStreamJson(served));
  }

  /** Stops following the live state. */
  close(): void {
    this.unsubscribe();
  }

  private forget(machineID: string): void {
    this.parts.xml.delete(machineID);
    this.parts.json.delete(machineID);
  }

  /** A new model: every part goes, and the order is the devices' as sortForPrinting prints them. */
  private reset(model: DeviceModel): void {
    this.model = model;
    this.agentDevice = model.agentAvailability.parent.device;
    this.parts.xml.clear();
    this.parts.json.clear();
    const keyed: Array<[deviceId: string, key: string]> = [[model.agentAvailability.parent.device.id, AGENT]];
    for (const [machineID, items] of model.byMachine) {
      const own = Object.values(items).find((def) => def !== undefined && def.parent.device !== this.agentDevice);
      if (own) keyed.push([own.parent.device.id, machineID]);
    }
    keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.order = keyed.map(([, key]) => key);
  }
}
