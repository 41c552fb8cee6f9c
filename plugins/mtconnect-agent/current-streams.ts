/**
 * /current of every device from DeviceStream parts kept per device: a
 * machine's part is written again only after the live state applied one of
 * its observations (or the device model changed), so /current of a thousand
 * machines joins a thousand kept parts instead of writing every observation
 * of every machine each time. Each part is kept encoded (UTF-8): a request
 * copies the kept bytes into the document's chunks (documents.ts, framed),
 * and its text is never encoded again. Requests with a filter or `at=` are
 * written whole (stream-reads.ts).
 *
 * Within a part, each observation's XML element is kept as long as the
 * observation is its data item's last: a machine sampled again writes only
 * the elements of what changed (at 1 Hz, its positions, loads and speeds),
 * and the part is put together around the others as they were written.
 *
 * While a client polls /current (a request of a format in the last
 * WARM_MS), the parts a commit made stale are written again soon after it,
 * TURN_MS at a time between other work, rather than by the next request: at
 * 1 Hz a commit changes most machines, and the request after it waited for
 * all their parts. A request still writes what is left.
 */
import { deviceStreamJson } from './documents-json.js';
import { deviceStreamXml, observationXml } from './documents-xml.js';
import { sortForPrinting } from './documents.js';
import type { LiveState } from './live-state.js';
import type { ComponentDef, DataItemDef, DeviceModel } from './model.js';
import type { Observation } from './replay.js';
import type { Served } from './served.js';
import { lastObservations } from './stream-reads.js';

/** The key of the Agent device's part (no machineID is empty). */
const AGENT = '';
/** The part of a device with no observation. */
const NOTHING = Buffer.alloc(0);

type Format = 'xml' | 'json';
const FORMATS: readonly Format[] = ['xml', 'json'];

/** How long after a request of a format its stale parts are written again without one. */
const WARM_MS = 10_000;
/** How long one turn of that writing runs before it lets other work go on. */
const TURN_MS = 4;

/** An observation's XML element, as written into a part. */
interface KeptElement {
  o: Observation;
  element: string;
}

export class CurrentStreams {
  private model: DeviceModel | undefined;
  private agentDevice: ComponentDef | undefined;
  /** The machineIDs (and AGENT) in the order their devices are printed. */
  private order: string[] = [];
  private readonly parts: Record<Format, Map<string, Buffer>> = { xml: new Map(), json: new Map() };
  /**
   * The XML element of each data item's last observation written into a
   * part (of the model's data items: a new model writes them anew). A data
   * item with several observations at once (a condition with two alarms)
   * keeps one of them; the others are written again. A plain map by data
   * item, changed in place: a weak map by observation made every collection
   * of the fleet's heap slower.
   */
  private elements = new Map<DataItemDef, KeptElement>();
  private readonly keptElement = (s: Served): string => {
    const kept = this.elements.get(s.def);
    if (kept?.o === s.o) return kept.element;
    const element = observationXml(s);
    if (kept) {
      kept.o = s.o;
      kept.element = element;
    } else {
      this.elements.set(s.def, { o: s.o, element });
    }
    return element;
  };
  private readonly unsubscribe: () => void;
  /** When each format was last asked for, and the Agent device's observation it was asked with. */
  private readonly asked: Record<Format, number> = { xml: -Infinity, json: -Infinity };
  private agent: Served | undefined;
  /** The parts forgotten since they were last written, to write again while a format is polled. */
  private readonly stale = new Set<string>();
  private refreshing: NodeJS.Immediate | undefined;

  constructor(private readonly live: LiveState) {
    this.unsubscribe = live.onObservations((observations) => {
      // A machine's connection is shown in the Agent device (its Adapter): its change is the Agent's part's.
      for (const o of observations) this.forget(this.model?.byMachine.get(o.machineID)?.[o.item]?.parent.device === this.agentDevice ? AGENT : o.machineID);
      if (this.stale.size > 0 && this.refreshing === undefined && this.polled().length > 0) this.refreshing = setImmediate(() => this.refresh());
    });
  }

  /** The formats asked for in the last WARM_MS. */
  private polled(): Format[] {
    const now = performance.now();
    return FORMATS.filter((f) => now - this.asked[f] < WARM_MS);
  }

  /** Writes stale parts of the polled formats for up to TURN_MS, then lets other work go on before the next turn. */
  private refresh(): void {
    this.refreshing = undefined;
    const model = this.model;
    const agent = this.agent;
    const formats = this.polled();
    if (!model || !agent || formats.length === 0) return this.stale.clear();
    const until = performance.now() + TURN_MS;
    for (const key of this.stale) {
      this.stale.delete(key);
      if (key !== AGENT && !model.byMachine.has(key)) continue;
      for (const format of formats) {
        if (!this.parts[format].has(key)) this.parts[format].set(key, this.write(format, model, key, agent));
      }
      if (performance.now() >= until) break;
    }
    if (this.stale.size > 0) this.refreshing = setImmediate(() => this.refresh());
  }

  /** The DeviceStream parts of /current in `format`, in document order; `agent` is the Agent device's observation. */
  deviceStreams(format: Format, model: DeviceModel, agent: Served): Buffer[] {
    if (model !== this.model) this.reset(model);
    this.asked[format] = performance.now();
    this.agent = agent;
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
    const ofAgent = (def: DataItemDef) => def.parent.device === agentDevice;
    const served: Served[] = [];
    if (key === AGENT) {
      served.push(agent);
      for (const machineID of model.byMachine.keys()) lastObservations(model, this.live.replay(machineID), ofAgent, served);
    } else {
      lastObservations(model, this.live.replay(key), (def) => !ofAgent(def), served);
    }
    if (served.length === 0) return NOTHING;
    sortForPrinting(served);
    return Buffer.from(format === 'xml' ? deviceStreamXml(served, this.keptElement) : deviceStreamJson(served));
  }

  /** Stops following the live state. */
  close(): void {
    this.unsubscribe();
    if (this.refreshing) clearImmediate(this.refreshing);
    this.refreshing = undefined;
    this.stale.clear();
  }

  private forget(key: string): void {
    this.parts.xml.delete(key);
    this.parts.json.delete(key);
    this.stale.add(key);
  }

  /** A new model: every part goes, and the order is the devices' as sortForPrinting prints them. */
  private reset(model: DeviceModel): void {
    this.model = model;
    this.agentDevice = model.agentAvailability.parent.device;
    this.parts.xml.clear();
    this.parts.json.clear();
    this.stale.clear();
    this.elements = new Map();
    const keyed: Array<[deviceId: string, key: string]> = [[model.agentAvailability.parent.device.id, AGENT]];
    for (const [machineID, items] of model.byMachine) {
      const own = Object.values(items).find((def) => def !== undefined && def.parent.device !== this.agentDevice);
      if (own) keyed.push([own.parent.device.id, machineID]);
    }
    keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.order = keyed.map(([, key]) => key);
  }
}
