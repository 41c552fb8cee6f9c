import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../plugins/mtconnect-agent/agent.js';
import { GatewayReader } from '../../../plugins/mtconnect-agent/gateway-reader.js';
import { LiveState } from '../../../plugins/mtconnect-agent/live-state.js';
import { ReplayCheckpoints } from '../../../plugins/mtconnect-agent/replay-checkpoints.js';
import { sample } from '../../../plugins/mtconnect-agent/stream-reads.js';
import { until } from '../../fixtures/until.js';
import { headerOf, observationsOf, parseXml, startAgent, untilMachinesReported, type TestAgent } from './agent-fixture.js';

type Obs = ReturnType<typeof observationsOf>[number];
const key = (o: Obs) => `${o.seq} ${o.id} ${o.element} ${o.value}`;

/** Every observation from `from` up to the head, read in pages of `count` following nextSequence. */
async function readAll(agent: TestAgent, from: number, count = 10_000): Promise<{ observations: Obs[]; next: number }> {
  const observations: Obs[] = [];
  let next = from;
  for (;;) {
    const res = await agent.get(`/sample?from=${next}&count=${count}`);
    expect(res.status).toBe(200);
    const page = observationsOf(res.body);
    observations.push(...page);
    const h = headerOf(res.body);
    next = h.nextSequence;
    if (page.length < count || next > h.lastSequence) return { observations, next };
  }
}

const EXEC = ['RUNNING', 'HOLD', 'STOPPED', 'RESET'];
const MODES = ['AUTO', 'MDI', 'JOG', 'EDIT'];
const STATES = ['running', 'idle', 'offline', 'noData', 'alarm', 'setup'];

/** Writes `n` rows of changing status, state, part count and alarms for M01 and M02, as the machines' actors would. */
async function churn(agent: TestAgent, n: number): Promise<void> {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const machineID = i % 3 === 0 ? 'M02' : 'M01';
    const ts = Date.now();
    switch (i % 5) {
      case 0:
      case 1:
        rows.push({ machineID, cls: 'CNCStatus', ts, data: { cncStatus: 'X', adjustedStatus: EXEC[i % 4], alarmStatus: false, alarmLevel: i % 7 === 0 ? 'none' : 'alarm', mode: MODES[(i >> 1) % 4], programStatus: 'running', emergency: i % 11 === 0, program: `O${i % 6}`, time: ts } });
        break;
      case 2:
        rows.push({ machineID, cls: 'State', ts, data: { state: STATES[i % 6], reason: `${STATES[i % 6]}: churn ${i}`, connection: i % 6 === 2 ? 'backoff' : 'online' } });
        break;
      case 3:
        rows.push({ machineID, cls: 'Count', ts, data: { delta: 1, partCount: i, partsTotal: 1000 + i, lastCycleTime: 5, program: 'O1' } });
        break;
      default:
        rows.push({ machineID, cls: 'AlarmLog', ts, data: { event: i % 2 ? 'start' : 'end', code: String(i % 3), message: `A${i % 3}`, level: 'alarm', since: ts } });
    }
  }
  await agent.write(rows);
}

/** The last observation of each data item among `observations`. */
function lastOfEach(observations: readonly Obs[]): Map<string, Obs> {
  const last = new Map<string, Obs>();
  for (const o of observations) if (!o.id.endsWith('_system')) last.set(o.id, o);
  return last;
}

describe('MTConnect sequence numbers from the history', () => {
  it('a client resuming with from= after a restart gets every observation since, without a gap or a repeat, under the same instanceId', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mtc-restart-'));
    try {
      let agent = await startAgent({}, dataDir);
      await untilMachinesReported(agent);
      const first = headerOf((await agent.get('/current')).body);
      const before = await readAll(agent, first.firstSequence);
      await agent.stop();

      agent = await startAgent({}, dataDir);
      try {
        const restarted = headerOf((await agent.get('/current')).body);
        expect(restarted.instanceId).toBe(first.instanceId);
        // The machines report again after the restart, so there is something new to resume to.
        await until('rows after the restart', async () => headerOf((await agent.get('/current')).body).nextSequence, (n) => n > restarted.nextSequence, 60_000);
        const after = await readAll(agent, before.next);
        expect(after.observations.length).toBeGreaterThan(0);
        expect(after.observations.every((o) => o.seq >= before.next)).toBe(true);
        const current = (await agent.get('/current')).body;
        const whole = await readAll(agent, first.firstSequence);
        const upTo = whole.observations.filter((o) => o.seq < after.next).map(key);
        expect([...before.observations, ...after.observations].map(key)).toEqual(upTo);
        // The state rebuilt at the restart is the history's: /current is the last of each data item read from the start.
        const last = lastOfEach(whole.observations.filter((o) => o.seq < headerOf(current).nextSequence));
        const shown = observationsOf(current).filter((o) => !o.id.endsWith('_system') && o.id !== '_agent_avail');
        expect(shown.map(key).sort()).toEqual([...last.values()].map(key).sort());
      } finally {
        await agent.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('the instanceId changes when the history is lost', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mtc-lost-'));
    try {
      let agent = await startAgent({ machines: [] }, dataDir);
      const before = headerOf((await agent.get('/current')).body).instanceId;
      await agent.stop();
      for (const f of ['gateway.db', 'gateway.db-wal', 'gateway.db-shm']) rmSync(join(dataDir, f), { force: true });
      // Made from the clock in seconds: a second later it differs.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      agent = await startAgent({ machines: [] }, dataDir);
      expect(headerOf((await agent.get('/current')).body).instanceId).not.toBe(before);
      await agent.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('MTConnect reads of one running agent', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startAgent();
    await untilMachinesReported(agent);
    await churn(agent, 400);
  }, 60_000);
  afterAll(() => agent?.stop());

  it('/current of every device, written from parts kept per device, says what the document written whole says and follows each new observation', async () => {
    // A path selecting every device is written whole, observation by observation; the machines keep reporting,
    // so the two are compared when they answer as of the same sequence number.
    const everything = `/current?path=${encodeURIComponent('//Agent|//Device')}`;
    const streamsOf = (body: string) => JSON.stringify(JSON.parse(body).MTConnectStreams.Streams);
    const both = (accept?: string) =>
      until(
        'both as of one sequence number',
        async () => [(await agent.get('/current', accept)).body, (await agent.get(everything, accept)).body] as const,
        ([kept, whole]) => (accept ? JSON.parse(kept).MTConnectStreams.Header.nextSequence === JSON.parse(whole).MTConnectStreams.Header.nextSequence : headerOf(kept).nextSequence === headerOf(whole).nextSequence),
      );
    const [keptXml, wholeXml] = await both();
    expect(observationsOf(keptXml)).toEqual(observationsOf(wholeXml));
    expect(keptXml.slice(keptXml.indexOf('<Streams>'))).toBe(wholeXml.slice(wholeXml.indexOf('<Streams>')));
    const [keptJson, wholeJson] = await both('application/json');
    expect(streamsOf(keptJson)).toBe(streamsOf(wholeJson));
    await agent.write([{ machineID: 'M01', cls: 'Count', ts: Date.now(), data: { delta: 1, partCount: 737373, partsTotal: 737373, lastCycleTime: 5, program: 'O1' } }]);
    const [after] = await both();
    expect(observationsOf(after).find((o) => o.id === 'M01_partcount')?.value).toBe('737373');
    const [afterJson, wholeAfterJson] = await both('application/json');
    expect(afterJson).toContain('"value":"737373"');
    expect(streamsOf(afterJson)).toBe(streamsOf(wholeAfterJson));
  });

  it('/current is the last observation of each data item that /sample gives from the start, and /sample from its nextSequence repeats nothing', async () => {
    const current = (await agent.get('/current')).body;
    const h = headerOf(current);
    const all = await readAll(agent, h.firstSequence);
    const last = lastOfEach(all.observations.filter((o) => o.seq < h.nextSequence));
    const shown = observationsOf(current).filter((o) => !o.id.endsWith('_system') && o.id !== '_agent_avail');
    expect(shown.map(key).sort()).toEqual([...last.values()].map(key).sort());
    const next = observationsOf((await agent.get(`/sample?from=${h.nextSequence}`)).body);
    expect(next.every((o) => o.seq >= h.nextSequence)).toBe(true);
  });

  it('/current?at= is the last observation of each data item at or before that sequence number', async () => {
    const h = headerOf((await agent.get('/current')).body);
    const all = await readAll(agent, h.firstSequence);
    const inside = all.observations[Math.floor(all.observations.length / 2)]!;
    for (const at of [inside.seq, inside.seq - 1, h.lastSequence]) {
      const res = await agent.get(`/current?at=${at}`);
      expect(res.status).toBe(200);
      const shown = observationsOf(res.body).filter((o) => !o.id.endsWith('_system') && o.id !== '_agent_avail');
      expect(shown.map(key).sort(), `at=${at}`).toEqual([...lastOfEach(all.observations.filter((o) => o.seq <= at)).values()].map(key).sort());
    }
    expect((await agent.get(`/current?at=${h.firstSequence - 1}`)).status).toBe(400);
    // Beyond any sequence number the history can reach while the test runs (the machines keep reporting).
    expect((await agent.get(`/current?at=${h.nextSequence + 100_000_000}`)).status).toBe(400);
  });

  it('count pages follow nextSequence; to stops at a sequence number; a negative count reads back from the end', async () => {
    const h = headerOf((await agent.get('/current')).body);
    const whole = await readAll(agent, h.firstSequence);
    const paged = await readAll(agent, h.firstSequence, 7);
    expect(paged.observations.slice(0, whole.observations.length).map(key)).toEqual(whole.observations.map(key));

    const page = (await agent.get(`/sample?from=${h.firstSequence}&count=5`)).body;
    expect(headerOf(page).nextSequence).toBe(observationsOf(page)[4]!.seq + 1);

    const to = whole.observations[20]!.seq;
    const upTo = (await agent.get(`/sample?from=${h.firstSequence}&to=${to}&count=100`)).body;
    expect(observationsOf(upTo).map(key)).toEqual(whole.observations.slice(0, 21).map(key));
    expect(headerOf(upTo).nextSequence).toBe(to + 1);
    const lastTen = (await agent.get(`/sample?from=${h.firstSequence}&to=${to}&count=10`)).body;
    expect(observationsOf(lastTen).map(key)).toEqual(whole.observations.slice(11, 21).map(key));

    const back = (await agent.get(`/sample?from=${to}&count=-4`)).body;
    expect(observationsOf(back).map(key)).toEqual(whole.observations.slice(17, 21).map(key));
    expect(headerOf(back).nextSequence).toBe(whole.observations[17]!.seq - 1);
  });

  it('forward pages go on from where the last one left off: the same observations as pages read afresh, without rebuilding the machines\' state at each page', async () => {
    const ctx = agent.tg.gateway.context;
    /** The gateway's reader, counting the rebuilds of machines' state before a position. */
    class CountingReader extends GatewayReader {
      rebuilds = 0;
      override lastRowsBefore(...args: Parameters<GatewayReader['lastRowsBefore']>) {
        this.rebuilds++;
        return super.lastRowsBefore(...args);
      }
    }
    const reader = new CountingReader(ctx);
    const live = await LiveState.open(reader);
    try {
      const own = new Agent(reader, live, { version: 'test', sender: 'test', instanceId: 1, gatewayId: 'gw', startedAt: Date.now() });
      const model = own.model();
      const header = await own.header();
      const pages = async (checkpoints?: ReplayCheckpoints) => {
        const seen: string[] = [];
        let from = header.firstSequence;
        for (let i = 0; i < 40 && from < header.nextSequence; i++) {
          const page = await sample(reader, model, header, { from, count: 7 }, live.through, checkpoints);
          seen.push(...page.observations.map((s) => `${s.o.seq} ${s.def.id} ${s.o.value}`));
          from = page.header.nextSequence;
        }
        return seen;
      };
      reader.rebuilds = 0;
      const afresh = await pages();
      const rebuiltAfresh = reader.rebuilds;
      reader.rebuilds = 0;
      const goingOn = await pages(new ReplayCheckpoints());
      expect(goingOn).toEqual(afresh);
      expect(afresh.length).toBeGreaterThan(7 * 10);
      expect(rebuiltAfresh).toBeGreaterThanOrEqual(10);
      // Machines met on the first page are not rebuilt again; one met later is rebuilt once.
      expect(reader.rebuilds).toBeLessThanOrEqual(2);
    } finally {
      live.close();
    }
  });

  it('a path filter reads the data items it selects: by type, by category, by component', async () => {
    const h = headerOf((await agent.get('/current')).body);
    const ids = async (path: string) => [...new Set(observationsOf((await agent.get(`/sample?from=${h.firstSequence}&count=10000&path=${encodeURIComponent(path)}`)).body).map((o) => o.id))].sort();
    expect(await ids('//DataItem[@type="EXECUTION"]')).toEqual(['M01_exec', 'M02_exec']);
    expect(await ids('//DataItem[@category="CONDITION"]')).toEqual(['M01_system', 'M02_system']);
    expect(await ids("//Device[@name='M02']//Path")).toEqual(['M02_exec', 'M02_partcount', 'M02_program', 'M02_tool', 'M02_vault_hash', 'M02_vault_program']);
    expect(await ids('//Adapter|//Device/DataItems/DataItem[@type="AVAILABILITY"]')).toEqual(['M01_avail', 'M01_connection', 'M02_avail', 'M02_connection']);
    // A component selects every data item below it, its Path's among them.
    const m01 = (await agent.get('/M01/current?path=//Controller')).body;
    expect([...new Set(observationsOf(m01).map((o) => o.id))].sort()).toEqual(['M01_estop', 'M01_exec', 'M01_mode', 'M01_partcount', 'M01_program', 'M01_system', 'M01_tool', 'M01_vault_hash', 'M01_vault_program']);
  });

  it('a reader behind the oldest row the history keeps gets OUT_OF_RANGE, polling or streaming, and starts over from /current', async () => {
    const h = headerOf((await agent.get('/current')).body);
    const db = agent.tg.gateway.context.db;
    const cut = Math.floor((h.firstSequence + h.nextSequence) / 200);
    // What retention does to the oldest rows.
    await db.write((tx) => tx.run('DELETE FROM history WHERE seq < ?', [cut]));
    const res = await agent.get(`/sample?from=${h.firstSequence}`);
    expect(res.status).toBe(400);
    const error = parseXml(res.body).MTConnectError.Errors.OutOfRange;
    const first = Number(error.QueryParameter.Minimum);
    expect(first).toBeGreaterThan(h.firstSequence);
    expect(headerOf((await agent.get('/current')).body).firstSequence).toBe(first);
    expect((await agent.get(`/sample?from=${h.firstSequence}&interval=100`)).status).toBe(400);
    const over = headerOf((await agent.get('/current')).body).nextSequence;
    expect((await agent.get(`/sample?from=${over}`)).status).toBe(200);
  });
});
