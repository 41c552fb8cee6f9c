import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaErrors, type DocumentKind } from '../../fixtures/mtconnect/validate.js';
import { headerOf, list, observationsOf, parseXml, startAgent, untilMachinesReported, type TestAgent } from './agent-fixture.js';

let agent: TestAgent;
const now = () => Date.now();

beforeAll(async () => {
  // No Heartbeat row during the test: at one, the agent closes alarms the machine's status says are not active (these are written here, not by the machine).
  agent = await startAgent({ history: { flushIntervalMs: 20, heartbeatSec: 3600 } });
  await untilMachinesReported(agent);
  // Alarms of every level, one of them ended, so the condition shows Fault, Warning and Normal with native codes.
  await agent.write([
    { machineID: 'M01', cls: 'AlarmLog', ts: now(), data: { event: 'start', code: 'EX1001', message: 'SPINDLE <OVERLOAD> & "heat"', level: 'alarm', since: now() } },
    { machineID: 'M01', cls: 'AlarmLog', ts: now(), data: { event: 'start', code: '2002', message: 'LUBE LOW', level: 'warning', since: now() } },
    { machineID: 'M02', cls: 'AlarmLog', ts: now(), data: { event: 'start', code: '3003', message: 'DOOR', level: 'emergency', since: now() } },
    { machineID: 'M02', cls: 'AlarmLog', ts: now(), data: { event: 'end', code: '3003', message: 'DOOR', level: 'emergency', since: now() } },
  ]);
}, 60_000);

afterAll(() => agent?.stop());

async function valid(kind: DocumentKind, path: string, status = 200): Promise<string> {
  const res = await agent.get(path);
  expect(res.status, path).toBe(status);
  expect(res.contentType).toBe('text/xml');
  expect(await schemaErrors(kind, res.body), path).toEqual([]);
  return res.body;
}

describe('MTConnect documents valid against the 2.7 schemas', () => {
  it('the probe: the Agent with an adapter per machine, and each machine a Device with its controller, path and axes', async () => {
    const xml = await valid('Devices', '/probe');
    const devices = parseXml(xml).MTConnectDevices.Devices;
    expect(devices.Agent['@_name']).toBe('Agent');
    expect(list(devices.Agent.Components.Adapters.Components.Adapter).map((a) => a['@_name'])).toEqual(['M01', 'M02']);
    const m01 = list(devices.Device).find((d) => d['@_name'] === 'M01');
    expect(m01['@_uuid']).toMatch(/^[0-9a-f-]{36}:M01$/);
    const types = (node: { DataItems?: { DataItem: unknown } }) => list(node.DataItems?.DataItem as { '@_type': string }[]).map((d) => d['@_type']);
    expect(types(m01)).toEqual(['AVAILABILITY', 'MESSAGE']);
    const controller = m01.Components.Controller;
    expect(types(controller)).toEqual(['EMERGENCY_STOP', 'CONTROLLER_MODE', 'SYSTEM']);
    // The simulator reads every family: the tool number on the path, and the axes and spindle.
    expect(types(controller.Components.Path)).toEqual(['EXECUTION', 'PROGRAM', 'PROGRAM_HEADER', 'PROGRAM_COMMENT', 'PART_COUNT', 'TOOL_NUMBER']);
    const axes = m01.Components.Axes.Components;
    expect(list(axes.Linear).flatMap(types)).toEqual(list(axes.Linear).map(() => 'POSITION'));
    expect(types(list(axes.Rotary).find((r) => r['@_name'] === 'spindle'))).toEqual(['ROTARY_VELOCITY', 'LOAD']);
    await valid('Devices', '/M02');
    await valid('Devices', '/probe?deviceType=Device');
    // Only the Agent, as cppagent answers: the 2.7 schema wants at least one Device beside it, so this one document is not checked against it.
    const agentOnly = parseXml((await agent.get('/probe?deviceType=Agent')).body).MTConnectDevices.Devices;
    expect(Object.keys(agentOnly)).toEqual(['Agent']);
  });

  it('current, current at a sequence number and sample, with every condition level', async () => {
    const current = await valid('Streams', '/current');
    const levels = new Set(observationsOf(current).filter((o) => o.id.endsWith('_system')).map((o) => o.element));
    expect([...levels].sort()).toEqual(['Fault', 'Normal', 'Warning']);
    const fault = observationsOf(current).find((o) => o.element === 'Fault');
    expect(fault?.value).toBe('SPINDLE <OVERLOAD> & "heat"');
    expect(fault?.attrs['@_nativeCode']).toBe('EX1001');
    const { firstSequence, lastSequence } = headerOf(current);
    await valid('Streams', `/current?at=${Math.floor((firstSequence + lastSequence) / 2)}`);
    const sample = await valid('Streams', `/sample?from=${firstSequence}&count=1000`);
    expect(observationsOf(sample).some((o) => o.element === 'Unavailable')).toBe(true);
    await valid('Streams', '/M01/sample?count=5');
    await valid('Streams', `/sample?from=${lastSequence + 1}`);
  });

  it('assets: the tool life of each machine as CuttingTool assets, all and by id', async () => {
    const xml = await valid('Assets', '/assets');
    const tools = list(parseXml(xml).MTConnectAssets.Assets.CuttingTool);
    expect(tools.length).toBeGreaterThan(0);
    const first = tools[0];
    expect(first.CuttingToolLifeCycle.ToolLife['@_type']).toMatch(/^(PART_COUNT|MINUTES)$/);
    await valid('Assets', `/asset/${first['@_assetId']}`);
    await valid('Assets', '/M01/assets?count=2');
  });

  it('errors: each kind of refusal is an MTConnectError document with its HTTP status', async () => {
    const cases: [string, number, string][] = [
      ['/sample?from=1', 400, 'OutOfRange'],
      ['/sample?count=10001', 400, 'OutOfRange'],
      ['/sample?count=abc', 400, 'InvalidParameterValue'],
      ['/current?path=//Nothing', 400, 'InvalidXPath'],
      ['/NOPE/current', 404, 'NoDevice'],
      ['/asset/NOPE', 404, 'AssetNotFound'],
      ['/a/b/c/d', 404, 'InvalidURI'],
      ['/asset/;', 400, 'InvalidRequest'],
    ];
    for (const [path, status, element] of cases) {
      const xml = await valid('Error', path, status);
      expect(Object.keys(parseXml(xml).MTConnectError.Errors), path).toEqual([element]);
    }
    const put = await fetch(`${agent.url}/current`, { method: 'PUT', body: 'x' });
    const body = await put.text();
    expect(put.status).toBe(405);
    expect(await schemaErrors('Error', body)).toEqual([]);
    expect(Object.keys(parseXml(body).MTConnectError.Errors)).toEqual(['Unsupported']);
  });
});

describe("MTConnect documents in cppagent's JSON version 2 form", () => {
  const json = async (path: string, status = 200) => {
    const res = await agent.get(path, 'application/json');
    expect(res.status, path).toBe(status);
    expect(res.contentType).toMatch(/^application\/json(;|$)/);
    return JSON.parse(res.body);
  };

  it('groups entities by name in arrays under each document', async () => {
    const probe = (await json('/probe')).MTConnectDevices;
    expect(probe.jsonVersion).toBe(2);
    expect(probe.Devices.Agent[0].name).toBe('Agent');
    expect(probe.Devices.Device.map((d: { name: string }) => d.name)).toEqual(['M01', 'M02']);
    expect(probe.Devices.Device[0].Components.Controller[0].Components.Path[0].DataItems.DataItem[0].type).toBe('EXECUTION');

    const current = (await json('/current')).MTConnectStreams;
    expect(current.Header.nextSequence).toBeGreaterThan(current.Header.firstSequence);
    const m01 = current.Streams.DeviceStream.find((d: { name: string }) => d.name === 'M01');
    const path = m01.ComponentStream.find((c: { component: string }) => c.component === 'Path');
    expect(path.Events.Execution[0]).toEqual(expect.objectContaining({ dataItemId: 'M01_exec', sequence: expect.any(Number), value: expect.any(String) }));
    const controller = m01.ComponentStream.find((c: { component: string }) => c.component === 'Controller');
    expect(controller.Condition.Fault[0]).toEqual(expect.objectContaining({ type: 'SYSTEM', nativeCode: 'EX1001', value: 'SPINDLE <OVERLOAD> & "heat"' }));

    // The simulated machines keep moving, so observations may have arrived since: a sample from the next sequence holds only those.
    const later = (await json(`/sample?from=${current.Header.nextSequence}`)).MTConnectStreams;
    const sequences = JSON.stringify(later.Streams).match(/"sequence":\d+/g)?.map((s) => Number(s.slice(11))) ?? [];
    expect(sequences.filter((s) => s < current.Header.nextSequence)).toEqual([]);
    expect(later.Header.nextSequence).toBeGreaterThanOrEqual(current.Header.nextSequence);
    expect((await json('/assets')).MTConnectAssets.Assets.CuttingTool.length).toBeGreaterThan(0);

    const error = (await json('/sample?from=1', 400)).MTConnectError;
    expect(error.Errors.OutOfRange[0]).toEqual(expect.objectContaining({ errorCode: 'OUT_OF_RANGE', QueryParameter: expect.objectContaining({ name: 'from', Value: '1' }) }));
    expect((await agent.get('/current?format=json')).contentType).toMatch(/^application\/json(;|$)/);
  });
});
