import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import type { HistoryRow } from '../../core/roles/gateway/history/writer.js';
import { runRetention, type RetentionPolicy } from '../../core/roles/gateway/history/retention.js';
import { DRIVERS } from '../../drivers/registry.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { historyPlugin } from '../../plugins/history/index.js';
import { TEST_ADMIN_PASSWORD } from '../fixtures/gateway.js';

const DAY = 86_400_000;
/** The gateway clock in these tests. */
const NOW = Date.UTC(2026, 5, 1, 12);

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  vi.useRealTimers();
});

/** A gateway with the history plugin on a fixed clock; security off, as these tests are about retention, not access. */
async function startGateway(retention: Record<string, unknown> = {}, dataDir = mkdtempSync(join(tmpdir(), 'gw-retention-'))): Promise<Gateway> {
  const config = parseConfig({
    logLevel: 'silent',
    security: { securityControl: false },
    history: { retention },
    gateway: { dataDir, timeZone: 'UTC' },
  });
  gateway = await Gateway.create({
    config,
    drivers: DRIVERS,
    plugins: [...TEST_PLUGINS.filter((p) => p.name !== historyPlugin.name), historyPlugin],
    logger: pino({ level: 'silent' }),
    env: { GATEWAY_ADMIN_PASSWORD: TEST_ADMIN_PASSWORD },
    now: () => NOW,
  });
  return gateway;
}

async function seed(g: Gateway, rows: HistoryRow[]): Promise<void> {
  for (const row of rows) g.context.history.push(row);
  await g.context.history.flush();
}

/** `count` rows of `cls` for `machineID`, the first `firstAgeDays` old, then one every `stepMs` towards now. */
function rows(machineID: string, cls: string, count: number, firstAgeDays: number, stepMs = DAY): HistoryRow[] {
  return Array.from({ length: count }, (_, i) => ({ machineID, cls, ts: NOW - firstAgeDays * DAY + i * stepMs, data: { i } }));
}

async function remaining(g: Gateway, cls: string, machineID?: string): Promise<number[]> {
  const where = machineID ? 'class = ? AND machine_id = ?' : 'class = ?';
  const found = await g.context.db.all<{ data: string }>(`SELECT data FROM history WHERE ${where} ORDER BY ts, seq`, machineID ? [cls, machineID] : [cls]);
  return found.map((r) => (JSON.parse(r.data) as { i: number }).i);
}

const policy = (p: Partial<RetentionPolicy>): RetentionPolicy => ({ default: { maxAgeDays: 0, maxRows: 0 }, classes: {}, ...p });

describe('history retention', () => {
  it('deletes rows older than maxAgeDays: per-class entry first, else the default; 0 is no limit', async () => {
    const g = await startGateway();
    // 20 State rows 20..1 days old, 5 Heartbeat rows 5..1 days old, 10 Count rows 100.. days old, on two machines.
    await seed(g, [...rows('A', 'State', 20, 20), ...rows('B', 'State', 20, 20), ...rows('A', 'Heartbeat', 5, 5), ...rows('A', 'Count', 10, 100)]);
    const run = await runRetention(g.context.db, policy({ default: { maxAgeDays: 10.5, maxRows: 0 }, classes: { Heartbeat: { maxAgeDays: 2.5, maxRows: 0 }, Count: { maxAgeDays: 0, maxRows: 0 } } }), {
      now: NOW,
    });
    // State: ages 20..11 go (older than 10.5 days), 10..1 stay.
    expect(await remaining(g, 'State', 'A')).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(await remaining(g, 'State', 'B')).toHaveLength(10);
    expect(await remaining(g, 'Heartbeat')).toEqual([3, 4]);
    expect(await remaining(g, 'Count')).toHaveLength(10);
    expect(run.deleted).toEqual({ Count: { byAge: 0, byRows: 0 }, Heartbeat: { byAge: 3, byRows: 0 }, State: { byAge: 20, byRows: 0 } });
    expect([run.totalDeleted, run.interrupted]).toEqual([23, false]);
  });

  it('trims a class to maxRows over all machines, oldest first', async () => {
    const g = await startGateway();
    // A and B interleave in time: A at even hours, B at odd hours.
    await seed(g, [...rows('A', 'Count', 6, 1, 2 * 3600_000), ...rows('B', 'Count', 4, 1 - 1 / 24, 2 * 3600_000), ...rows('A', 'State', 3, 1)]);
    const run = await runRetention(g.context.db, policy({ classes: { Count: { maxAgeDays: 0, maxRows: 5 } } }), { now: NOW });
    // Oldest five of A0 B0 A1 B1 A2 B2 A3 B3 A4 A5 go: A0 B0 A1 B1 A2.
    expect(await remaining(g, 'Count', 'A')).toEqual([3, 4, 5]);
    expect(await remaining(g, 'Count', 'B')).toEqual([2, 3]);
    expect(await remaining(g, 'State')).toHaveLength(3);
    expect(run.deleted.Count).toEqual({ byAge: 0, byRows: 5 });
  });

  it('applies the age limit first, then the row limit', async () => {
    const g = await startGateway();
    await seed(g, rows('A', 'State', 10, 10));
    const run = await runRetention(g.context.db, policy({ default: { maxAgeDays: 5.5, maxRows: 3 } }), { now: NOW });
    expect(await remaining(g, 'State')).toEqual([7, 8, 9]);
    expect(run.deleted.State).toEqual({ byAge: 5, byRows: 2 });
  });

  it('works in batches of batchRows rows, one write job each', async () => {
    const g = await startGateway();
    await seed(g, [...rows('A', 'State', 1050, 2000, 60_000), ...rows('B', 'Count', 1000, 1, 60)]);
    const writes = vi.spyOn(g.context.db, 'write');
    const run = await runRetention(g.context.db, policy({ default: { maxAgeDays: 1000, maxRows: 0 }, classes: { Count: { maxAgeDays: 0, maxRows: 100 } } }), {
      now: NOW,
      batchRows: 128,
    });
    expect(run.deleted).toEqual({ Count: { byAge: 0, byRows: 900 }, State: { byAge: 1050, byRows: 0 } });
    // State: 1050 rows → 8 full batches and one of 26; Count: 900 rows → 7 of 128 and one of 4.
    expect(run.batches).toBe(9 + 8);
    expect(writes).toHaveBeenCalledTimes(run.batches);
    expect(await remaining(g, 'Count')).toEqual(Array.from({ length: 100 }, (_, i) => 900 + i));
  });

  it('never blocks the history writer for long, and never touches the seq high-water mark: seq keeps rising during and after', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-retention-'));
    let g = await startGateway({}, dataDir);
    await seed(g, rows('A', 'State', 5000, 4000, 60_000));
    const lastSeq = g.context.history.stats.lastSeq;
    const during: number[] = [];
    let batchesStarted = 0;
    let batchesStartedWhenFlushed = -1;
    const run = await runRetention(g.context.db, policy({ default: { maxAgeDays: 1, maxRows: 0 } }), {
      now: NOW,
      batchRows: 250,
      shouldStop: () => {
        batchesStarted++;
        // A row recorded while retention runs gets the next seq and is written between two of its batches.
        if (batchesStarted === 3) {
          during.push(g.context.history.push({ machineID: 'A', cls: 'State', ts: NOW, data: { i: -1 } }));
          void g.context.history.flush().then(() => (batchesStartedWhenFlushed = batchesStarted));
        }
        return false;
      },
    });
    expect(run.batches).toBe(21);
    expect(batchesStartedWhenFlushed).toBeGreaterThan(0);
    expect(batchesStartedWhenFlushed).toBeLessThanOrEqual(5);
    expect(run.deleted.State?.byAge).toBe(5000);
    expect(during).toEqual([lastSeq + 1]);
    expect(await remaining(g, 'State')).toEqual([-1]);
    const meta = await g.context.db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'history.seq'");
    expect(Number(meta?.value)).toBe(lastSeq + 1);

    // Retention deletes every row; the sequence still continues, after a restart too.
    await runRetention(g.context.db, policy({ default: { maxAgeDays: 0, maxRows: 1 } }), { now: NOW });
    expect(await remaining(g, 'State')).toEqual([-1]);
    await runRetention(g.context.db, policy({ default: { maxAgeDays: 0.000001, maxRows: 0 } }), { now: NOW + DAY });
    expect(await remaining(g, 'State')).toEqual([]);
    expect(g.context.history.push({ machineID: 'A', cls: 'State', ts: NOW, data: { i: 0 } })).toBe(lastSeq + 2);
    await g.stop();
    g = await startGateway({}, dataDir);
    expect(g.context.history.push({ machineID: 'A', cls: 'State', ts: NOW, data: { i: 1 } })).toBe(lastSeq + 3);
  });

  it('a run asked to stop ends at the next batch boundary and says so', async () => {
    const g = await startGateway();
    await seed(g, rows('A', 'State', 1000, 2000, 60_000));
    let asked = 0;
    const run = await runRetention(g.context.db, policy({ default: { maxAgeDays: 1, maxRows: 0 } }), { now: NOW, batchRows: 100, shouldStop: () => ++asked > 2 });
    expect([run.interrupted, run.batches, run.deleted.State?.byAge]).toEqual([true, 2, 200]);
    expect(await remaining(g, 'State')).toHaveLength(800);
  });
});

describe('the retention job in the gateway', () => {
  type Status = {
    policy: { intervalSec: number; default: { maxAgeDays: number; maxRows: number }; classes: Record<string, unknown> };
    batchRows: number;
    running: boolean;
    nextRunAtMs: number | null;
    lastRun: null | { startedAtMs: number; startedAt: string; durationMs: number; deleted: Record<string, { byAge: number; byRows: number }>; totalDeleted: number; error: string | null };
  };
  const status = async (g: Gateway): Promise<Status> => {
    const res = await g.http.inject({ method: 'GET', url: '/api/history/retention' });
    expect(res.statusCode).toBe(200);
    return (res.json() as { data: Status }).data;
  };

  it('runs on its timer from plugin start, shows the policy and the last run, makes kept analyses stale, and leaves no timer after stop', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const g = await startGateway({ intervalSec: 10, default: { maxAgeDays: 7, maxRows: 0 }, classes: { Heartbeat: { maxAgeDays: 1, maxRows: 0 } } });
    await seed(g, [...rows('A', 'State', 10, 10), ...rows('A', 'Heartbeat', 3, 3)]);
    const before = await status(g);
    expect(before).toMatchObject({
      policy: { intervalSec: 10, default: { maxAgeDays: 7, maxRows: 0 }, classes: { Heartbeat: { maxAgeDays: 1, maxRows: 0 } } },
      batchRows: 5000,
      running: false,
      nextRunAtMs: NOW + 10_000,
      lastRun: null,
    });
    expect(vi.getTimerCount()).toBe(1);
    const revisions = g.context.history.revisions;
    const revisionBefore = [revisions.of('A'), revisions.of('B')];

    await vi.advanceTimersByTimeAsync(10_000);
    await vi.waitFor(async () => expect((await status(g)).lastRun).not.toBeNull());
    // Analyses kept from the settled past (plugins/analysis) are stale for every machine once rows were deleted.
    expect(revisions.of('A')).toBeGreaterThan(revisionBefore[0]!);
    expect(revisions.of('B')).toBeGreaterThan(revisionBefore[1]!);
    const after = await status(g);
    expect(after.lastRun).toMatchObject({ startedAtMs: NOW, startedAt: '2026-06-01T12:00:00+00:00', deleted: { State: { byAge: 3, byRows: 0 }, Heartbeat: { byAge: 2, byRows: 0 } }, totalDeleted: 5, error: null });
    expect(await remaining(g, 'State')).toHaveLength(7);
    // The next run is one interval later.
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1));
    expect(after.nextRunAtMs).toBe(NOW + 10_000);

    await g.stop();
    gateway = undefined;
    expect(vi.getTimerCount()).toBe(0);
  });

  it('the first run waits at most a minute, however long the interval', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const g = await startGateway({ intervalSec: 86_400 });
    expect((await status(g)).nextRunAtMs).toBe(NOW + 60_000);
  });
});
