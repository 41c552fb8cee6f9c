/**
 * The MTConnect simulators: the recorded lathe played in rounds whose
 * counters keep rising, the adapter's greeting and heartbeat, and the agent
 * stand-in's answers (sequence range, OUT_OF_RANGE, NO_DEVICE, streaming).
 */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMtconnectAgentSimulator } from '../../../drivers/mtconnect/agent-simulator.js';
import { loadLathe, Replay } from '../../../drivers/mtconnect/replay.js';
import { startMtconnectAdapterSimulator } from '../../../drivers/mtconnect/simulator.js';
import { parseStreams } from '../../../drivers/mtconnect/streams.js';
import { tokenize } from '../../../drivers/mtconnect/shdr-tokenizer.js';
import { until } from '../../fixtures/until.js';
import { START } from './helpers.js';

/** The values of `name` in SHDR lines, in order. */
function valuesOf(lines: readonly string[], name: string): string[] {
  return lines.flatMap((text) => {
    const tokens = tokenize(text.split('\n')[0] as string) ?? [];
    const at = tokens.indexOf(name);
    return at > 0 && at % 2 === 1 ? [tokens[at + 1] as string] : [];
  });
}

describe('the recorded lathe', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('plays in rounds, each stamped with the current time, its part count and timers rising from one round to the next', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.UTC(2026, 5, 1) });
    const { model, recording } = loadLathe();
    const lines: string[] = [];
    const replay = new Replay(recording, model, { startMs: 0, timeScale: 1, now: Date.now, emit: (text) => lines.push(text) });
    replay.start();
    vi.advanceTimersByTime(2 * recording.roundMs + 1_000);
    replay.stop();
    expect(valuesOf(lines, 'part_count')).toEqual(['120', '121', '122', '123', '123', '124', '125', '126', '126']);
    const operating = valuesOf(lines, 'operating_time').map(Number);
    expect(operating.every((t, i) => i === 0 || t >= (operating[i - 1] as number))).toBe(true);
    expect(lines.at(-1)?.startsWith(new Date(Date.UTC(2026, 5, 1) + 2 * recording.roundMs).toISOString().slice(0, 16))).toBe(true);
  });

  it('gives a client that connects mid-round the round so far, as the state to start from', () => {
    const { model, recording } = loadLathe();
    const replay = new Replay(recording, model, { startMs: 70_000, timeScale: 1, now: Date.now, emit: () => undefined });
    const snapshot = replay.snapshot();
    expect(valuesOf(snapshot, 'part_count')).toEqual(['120', '121', '122']);
    expect(valuesOf(snapshot, 'execution').at(-1)).toBe('ACTIVE');
    expect(snapshot.filter((text) => text.includes('@ASSET@')).length).toBeGreaterThanOrEqual(3);
  });
});

describe('the SHDR adapter simulator', () => {
  it('greets a client with the current state and answers its PING with a PONG', async () => {
    const sim = await startMtconnectAdapterSimulator({ machines: [START], heartbeatMs: 250 });
    const socket = net.connect(sim.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('* PING\n');
      await until('the greeting and the PONG', () => received, (text) => text.includes('* PONG 250\n') && text.includes('--multiline--T1LIFE\n'), 5_000);
      expect(received).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z\|avail\|AVAILABLE\|estop\|ARMED\|mode\|MANUAL\|execution\|READY/);
      await expect(startMtconnectAdapterSimulator({ machines: [START, START] })).rejects.toThrow('exactly one machine');
    } finally {
      socket.destroy();
      await sim.close();
    }
  });
});

describe('the MTConnect agent stand-in', () => {
  it('numbers observations across its devices, answers OUT_OF_RANGE and NO_DEVICE, and streams parts as they come', async () => {
    const sim = await startMtconnectAgentSimulator({ machines: [START, { ...START, machineID: 'MT-L09' }], replay: false, bufferSize: 100 });
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${sim.port}${path}`);
      return { status: res.status, doc: parseStreams(await res.text()) };
    };
    try {
      const first = await get('/sample?from=1&count=1000');
      if (first.doc.kind !== 'streams') throw new Error('expected streams');
      expect(first.doc.header).toMatchObject({ firstSequence: 1, nextSequence: sim.nextSequence, instanceId: sim.instanceId });
      expect(first.doc.observations.map((o) => o.sequence).sort((a, b) => a - b)).toEqual(Array.from({ length: sim.nextSequence - 1 }, (_, i) => i + 1));
      for (let i = 0; i < 60; i++) sim.feed('MT-L09', `${new Date().toISOString()}|part_count|${i}`);
      expect(await get('/sample?from=1')).toMatchObject({ status: 404, doc: { kind: 'error', errors: [{ code: 'OUT_OF_RANGE' }] } });
      expect(await get('/NOPE/current')).toMatchObject({ status: 404, doc: { kind: 'error', errors: [{ code: 'NO_DEVICE' }] } });
      const l09 = await get('/MT-L09/current');
      expect(l09.doc.kind === 'streams' && l09.doc.observations.find((o) => o.dataItemId === 'MT-L09_part_count')?.value).toBe('59');

      const controller = new AbortController();
      const res = await fetch(`http://127.0.0.1:${sim.port}/MT-L09/sample?from=${sim.nextSequence}&interval=10&heartbeat=100`, { signal: controller.signal });
      expect(res.headers.get('content-type')).toMatch(/^multipart\/x-mixed-replace;boundary=/);
      const reader = res.body!.getReader();
      sim.feed('MT-L09', `${new Date().toISOString()}|part_count|99`);
      let text = '';
      while (!text.includes('>99</PartCount>')) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).toMatch(/^--[0-9a-f]{32}\r\nContent-type: text\/xml\r\nContent-length: \d+\r\n\r\n<\?xml/);
      controller.abort();
    } finally {
      await sim.close();
    }
  });
});
