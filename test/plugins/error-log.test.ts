import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_LOG_MAX_BYTES, ERROR_LOG_MESSAGE_MAX_CHARS, ErrorLog } from '../../plugins/error-log/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

type Log = { window: { startUnix: number; endUnix: number; timeZone: string }; total: number; returned: number; truncated: boolean; data: Record<string, unknown>[] };

describe('error log', () => {
  it('records every interface error with time, path, errorCode, message, user and source IP', async () => {
    gw = await startTestGateway({ machines: [simMachine('M1')] });
    const before = Date.now();
    await gw.request('GET', '/api/config/machine?machineID=NOPE');
    await gw.request('GET', '/api/config/machines', undefined, { token: null, remoteAddress: '10.1.1.1' });
    const res = await gw.request('GET', '/api/log/error');
    expect(res.status).toBe(200);
    const log = res.body.data as Log;
    expect(log.total).toBe(2);
    expect(log.data[0]).toMatchObject({ path: '/api/config/machine', errorCode: 10003, user: 'admin', sourceIp: '127.0.0.1' });
    expect(log.data[0]?.errorMsg).toContain("'NOPE'");
    expect(log.data[1]).toMatchObject({ path: '/api/config/machines', errorCode: 3, user: null, sourceIp: '10.1.1.1' });
    expect(log.data[0]?.time as number).toBeGreaterThanOrEqual(before);
    expect(log.window.timeZone).toBe('UTC');
  });

  it('GW-62 limit keeps the most recent rows and reports total, returned and truncated', async () => {
    gw = await startTestGateway();
    for (let i = 0; i < 5; i++) await gw.request('GET', `/api/config/machine?machineID=M${i}`);
    const log = (await gw.request('GET', '/api/log/error?limit=2')).body.data as Log;
    expect([log.total, log.returned, log.truncated]).toEqual([5, 2, true]);
    expect(log.data.map((e) => String(e.errorMsg).match(/'(M\d)'/)?.[1])).toEqual(['M3', 'M4']);
    const all = (await gw.request('GET', '/api/log/error?limit=0')).body.data as Log;
    expect([all.returned, all.truncated]).toEqual([5, false]);
  });

  it('GW-16 start/end select a window, returned with the window object', async () => {
    gw = await startTestGateway();
    await gw.request('GET', '/api/config/machine?machineID=X');
    const past = (await gw.request('GET', '/api/log/error?start=2020-01-01&end=2020-01-02')).body.data as Log;
    expect(past.total).toBe(0);
    expect(past.window).toMatchObject({ startUnix: 1577836800, endUnix: 1577923200, start: '2020-01-01T00:00:00+00:00', timeZone: 'UTC' });
    const recent = (await gw.request('GET', '/api/log/error?start=-1h')).body.data as Log;
    expect(recent.total).toBe(1);
    const bad = await gw.request('GET', '/api/log/error?start=last%20tuesday');
    expect(bad.status).toBe(400);
    expect(bad.body.errorMsg).toMatch(/start/);
    expect(bad.body.errorMsg).toMatch(/-30m/);
  });

  it('never records secrets: not a failed password, nor a bad bearer token', async () => {
    gw = await startTestGateway();
    await gw.request('POST', '/api/auth/login', { username: 'admin', password: 'Hunter2-wrong-password' }, { token: null });
    await gw.request('GET', '/api/config/machines', undefined, { token: 'gwk_0123456789ab_SECRETSECRETSECRETSECRETSECRETSECRETSECRET123' });
    await gw.request('POST', '/api/security/user/add', { username: 'eve', password: 7 });
    const raw = (await gw.request('GET', '/api/log/error?limit=0')).raw;
    expect(raw).not.toMatch(/Hunter2|SECRETSECRET/);
    expect((JSON.parse(raw) as { data: Log }).data.total).toBe(3);
  });

  it('is bounded: only the newest entries are kept', () => {
    const log = new ErrorLog(3);
    for (let i = 1; i <= 5; i++) log.add({ time: i, path: `/api/p${i}`, errorCode: 1, errorName: 'X', errorMsg: '', user: null, sourceIp: null });
    expect(log.between(0, Infinity).map((e) => e.path)).toEqual(['/api/p3', '/api/p4', '/api/p5']);
  });

  it('is bounded by size as well: long messages are cut, and the oldest entries go when the text exceeds the byte bound', () => {
    const log = new ErrorLog(1000, 10_000);
    for (let i = 1; i <= 100; i++) log.add({ time: i, path: `/api/p${i}`, errorCode: 2, errorName: 'INVALID_PARAMETER', errorMsg: 'x'.repeat(100_000), user: null, sourceIp: '10.0.0.1' });
    const kept = log.between(0, Infinity);
    expect(log.heldBytes).toBeLessThanOrEqual(10_000);
    expect(kept.length).toBe(log.length);
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(100);
    expect(kept.at(-1)?.path).toBe('/api/p100');
    expect(kept.every((e) => e.errorMsg.length <= ERROR_LOG_MESSAGE_MAX_CHARS + 1)).toBe(true);
    expect(ERROR_LOG_MAX_BYTES).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('20 requests with megabyte IDs leave a small error log answer', async () => {
    gw = await startTestGateway();
    for (let i = 0; i < 20; i++) await gw.request('GET', `/api/config/machine?machineID=${'A'.repeat(1_000_000)}`);
    const res = await gw.request('GET', '/api/log/error?limit=0');
    expect((res.body.data as Log).total).toBe(20);
    expect(res.raw.length).toBeLessThan(20 * 1024);
  });
});
