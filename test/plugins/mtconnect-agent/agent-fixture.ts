/** A test gateway with its MTConnect agent (127.0.0.1, a free port) and helpers to ask it and to read its documents. */
import { XMLParser } from 'fast-xml-parser';
import type { HistoryRow } from '../../../core/roles/gateway/history/writer.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { until } from '../../fixtures/until.js';

export interface AgentResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface TestAgent {
  tg: TestGateway;
  url: string;
  get(path: string, accept?: string): Promise<AgentResponse>;
  /** Writes rows into the history and waits until they are committed (and so replayed by the agent). */
  write(rows: readonly HistoryRow[]): Promise<void>;
  stop(): Promise<void>;
}

/** A simulated machine sampled fast, with its part count and tool life. */
export function agentMachine(machineID: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return simMachine(machineID, {
    tasks: { CNCStatus: { enabled: true, intervalMs: 200 }, Count: { enabled: true, intervalMs: 200 }, ToolLife: { enabled: true, intervalMs: 200 } },
    ...extra,
  });
}

export async function startAgent(raw: Record<string, unknown> = {}, dataDir?: string): Promise<TestAgent> {
  const tg = await startTestGateway({ machines: [agentMachine('M01'), agentMachine('M02')], history: { flushIntervalMs: 20 }, ...raw }, ...(dataDir ? [dataDir] : []));
  const url = tg.gateway.context.services.get('mtconnect-agent').url;
  return {
    tg,
    url,
    async get(path, accept) {
      const res = await fetch(url + path, accept ? { headers: { accept } } : {});
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    },
    async write(rows) {
      for (const row of rows) tg.gateway.context.history.push(row);
      await tg.gateway.context.history.flush();
    },
    stop: () => tg.stop(),
  };
}

/** Waits until the agent's history holds a row of each machine's derived state (they have connected). */
export async function untilMachinesReported(agent: TestAgent, machineIDs: readonly string[] = ['M01', 'M02']): Promise<void> {
  await until(
    'every machine in /current',
    async () => list(parseXml((await agent.get('/current')).body).MTConnectStreams?.Streams?.DeviceStream).map((s) => s['@_name'] as string),
    (names) => machineIDs.every((id) => names.includes(id)),
  );
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseAttributeValue: false, parseTagValue: false });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are read by path in tests
export type Doc = any;

/** A document parsed (attributes as `@_name`, text as `#text`). */
export function parseXml(xml: string): Doc {
  return parser.parse(xml);
}

/** A value that may be one element or a list of them, as a list. */
export function list<T = Doc>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Every observation of a Streams document: element name, data item id, sequence and value. */
export function observationsOf(xml: string): { element: string; id: string; seq: number; value: string; attrs: Record<string, string> }[] {
  const doc = parseXml(xml);
  const out: { element: string; id: string; seq: number; value: string; attrs: Record<string, string> }[] = [];
  for (const device of list(doc.MTConnectStreams?.Streams?.DeviceStream)) {
    for (const component of list(device.ComponentStream)) {
      for (const category of ['Samples', 'Events', 'Condition']) {
        const group = component[category];
        if (!group) continue;
        for (const [element, entries] of Object.entries(group as Record<string, unknown>)) {
          for (const e of list(entries as Doc)) {
            const attrs = typeof e === 'object' ? e : {};
            out.push({ element, id: attrs['@_dataItemId'], seq: Number(attrs['@_sequence']), value: typeof e === 'object' ? (e['#text'] ?? '') : String(e), attrs });
          }
        }
      }
    }
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** A Streams document's header numbers. */
export function headerOf(xml: string): { nextSequence: number; firstSequence: number; lastSequence: number; instanceId: number; bufferSize: number } {
  const h = parseXml(xml).MTConnectStreams.Header;
  return { nextSequence: Number(h['@_nextSequence']), firstSequence: Number(h['@_firstSequence']), lastSequence: Number(h['@_lastSequence']), instanceId: Number(h['@_instanceId']), bufferSize: Number(h['@_bufferSize']) };
}
