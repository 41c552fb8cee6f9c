import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CurrentStreams } from '../../../plugins/mtconnect-agent/current-streams.js';
import type { LiveState } from '../../../plugins/mtconnect-agent/live-state.js';
import type { ComponentDef, DataItemDef, DeviceModel } from '../../../plugins/mtconnect-agent/model.js';
import type { MachineReplay, Observation } from '../../../plugins/mtconnect-agent/replay.js';
import type { Served } from '../../../plugins/mtconnect-agent/served.js';

/** A model of the Agent and one machine M1 with its EXECUTION, and a live state whose reads of M1 are counted. */
function fixture() {
  const component = (element: string, id: string, device?: ComponentDef): ComponentDef => {
    const c = { element, id, name: id, uuid: `${id}-uuid`, dataItems: [], components: [] } as unknown as ComponentDef;
    c.device = device ?? c;
    return c;
  };
  const agentDevice = component('Agent', 'agent');
  const device = component('Device', 'M1');
  const path = component('Path', 'M1_path', device);
  const agentAvail: DataItemDef = { id: 'agent_avail', type: 'AVAILABILITY', category: 'EVENT', name: 'agent_avail', source: { agent: 'avail' }, parent: agentDevice };
  const exec: DataItemDef = { id: 'M1_exec', type: 'EXECUTION', category: 'EVENT', name: 'exec', source: { machineID: 'M1', item: 'exec' }, parent: path };
  const model: DeviceModel = { devices: [agentDevice, device], dataItems: new Map([[agentAvail.id, agentAvail], [exec.id, exec]]), byMachine: new Map([['M1', { exec }]]), agentAvailability: agentAvail };
  const last: Partial<Record<string, Observation>> = { exec: { machineID: 'M1', item: 'exec', seq: 10, ts: 1_764_000_000_000, value: 'ACTIVE' } };
  let reads = 0;
  const replay = {
    machineID: 'M1',
    get last() {
      reads++;
      return last;
    },
    motion: { last: new Map() },
    conditionNow: () => [],
  } as unknown as MachineReplay;
  const listeners = new Set<(o: readonly Observation[]) => void>();
  const live = {
    replay: () => replay,
    onObservations: (l: (o: readonly Observation[]) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as LiveState;
  const agent: Served = { def: agentAvail, o: { machineID: '', item: 'avail', seq: 1, ts: 1_764_000_000_000, value: 'AVAILABLE' } };
  const change = (value: string, seq: number) => {
    const o: Observation = { machineID: 'M1', item: 'exec', seq, ts: 1_764_000_000_000 + seq, value };
    last.exec = o;
    for (const l of listeners) l([o]);
  };
  return { model, live, agent, change, reads: () => reads };
}

const text = (parts: Buffer[]) => Buffer.concat(parts).toString();
let streams: CurrentStreams | undefined;
afterEach(() => streams?.close());

describe('/current parts written again between requests while /current is polled', () => {
  it('after a request, the parts a change made stale are written before the next request, which finds them ready and new', async () => {
    const f = fixture();
    streams = new CurrentStreams(f.live);
    expect(text(streams.deviceStreams('xml', f.model, f.agent))).toContain('>ACTIVE</Execution>');
    f.change('STOPPED', 11);
    const readsAtChange = f.reads();
    await tick();
    await tick();
    // Written between requests: the machine's state was read again without a request.
    expect(f.reads()).toBeGreaterThan(readsAtChange);
    const readsBefore = f.reads();
    const now = text(streams.deviceStreams('xml', f.model, f.agent));
    expect(now).toContain('>STOPPED</Execution>');
    expect(now).not.toContain('ACTIVE');
    // The request wrote nothing: it found the part written.
    expect(f.reads()).toBe(readsBefore);
  });

  it('nothing is written between requests of a format nobody asked for, and a request then writes what changed', async () => {
    const f = fixture();
    streams = new CurrentStreams(f.live);
    // JSON was asked for; XML never was: only JSON parts are written again.
    expect(text(streams.deviceStreams('json', f.model, f.agent))).toContain('"ACTIVE"');
    f.change('FEED_HOLD', 12);
    await tick();
    await tick();
    const readsBefore = f.reads();
    expect(text(streams.deviceStreams('json', f.model, f.agent))).toContain('"FEED_HOLD"');
    expect(f.reads()).toBe(readsBefore);
    expect(text(streams.deviceStreams('xml', f.model, f.agent))).toContain('>FEED_HOLD</Execution>');
    expect(f.reads()).toBeGreaterThan(readsBefore);
  });

  it('closed, it writes nothing more', async () => {
    const f = fixture();
    streams = new CurrentStreams(f.live);
    streams.deviceStreams('xml', f.model, f.agent);
    streams.close();
    const reads = f.reads();
    f.change('STOPPED', 13);
    await tick();
    await tick();
    expect(f.reads()).toBe(reads);
  });
});
