import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/roles/index.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { DRIVERS } from '../../drivers/registry.js';
import { SimulatorClient } from '../../drivers/simulator/index.js';
import { TEST_PLUGINS } from '../fixtures/gateway.js';
import { MAX_PROGRAM_BYTES } from '../../core/roles/gateway/contract/program-files.js';
import { defineProgramFileInterfaces } from '../../plugins/gateway-api/program-files.js';
import { simMachine } from '../fixtures/gateway.js';

type Body = { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
type FileData = { machineID: string; dir: string; name: string; content?: string; encoding?: string; contentBase64: string; size: number; sha256: string };

const programFilesUnderTest = definePlugin<GatewayContext>({
  name: 'program-files-under-test',
  dependsOn: ['gateway-api'],
  register(ctx) {
    // Once gateway-api defines these itself, the test runs against its definitions.
    if (!ctx.interfaces.get('/api/file/program/download')) defineProgramFileInterfaces(ctx);
  },
});

let gateway: Gateway;
let dataDir: string;
/** The simulated machine's program directory and one of its programs. */
let dir: string;
let existing: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-program-files-'));
  const config = parseConfig({
    logLevel: 'silent',
    gateway: { dataDir, timeZone: 'UTC' },
    // Access control has its own tests; these are about the file transfer.
    security: { securityControl: false },
    machines: [simMachine('P'), simMachine('NF', { driverOptions: { families: ['status'] } }), simMachine('OFF', { isActive: false })],
  });
  gateway = await Gateway.create({ config, drivers: DRIVERS, plugins: [...TEST_PLUGINS, programFilesUnderTest], logger: pino({ level: 'silent' }), env: {} });
  await vi.waitFor(() => {
    for (const id of ['P', 'NF']) expect(gateway.fleet.connectionState(id)).toBe('online');
  }, { timeout: 5000, interval: 20 });
  const machine = (gateway.fleet.client('P') as SimulatorClient).machine;
  dir = machine.vendor.programDir;
  existing = machine.programs[0]?.name ?? '';
});

afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

async function download(query: Record<string, string>): Promise<{ status: number; body: Body }> {
  const res = await gateway.http.inject({ method: 'GET', url: '/api/file/program/download', query });
  return { status: res.statusCode, body: res.json() };
}

async function upload(body: Record<string, unknown>): Promise<{ status: number; body: Body }> {
  const res = await gateway.http.inject({ method: 'POST', url: '/api/file/program/upload', payload: body });
  return { status: res.statusCode, body: res.json() };
}

describe('program file download', () => {
  it('answers a program on the machine as bytes and as text, with its size and sha256', async () => {
    const res = await download({ machineID: 'P', dir, name: existing });
    expect([res.status, res.body.errorCode]).toEqual([200, 0]);
    const data = res.body.data as FileData;
    const expected = (gateway.fleet.client('P') as SimulatorClient).machine.download(dir, existing) ?? Buffer.alloc(0);
    expect(expected.length).toBeGreaterThan(0);
    expect(data).toEqual({
      machineID: 'P', dir, name: existing, content: expected.toString('utf8'), encoding: 'utf-8', contentBase64: expected.toString('base64'), size: expected.length, sha256: sha256(expected),
    });
  });

  it('text=false answers the bytes alone', async () => {
    const data = (await download({ machineID: 'P', dir, name: existing, text: 'false' })).body.data as FileData;
    const expected = (gateway.fleet.client('P') as SimulatorClient).machine.download(dir, existing) ?? Buffer.alloc(0);
    expect(data).toEqual({ machineID: 'P', dir, name: existing, contentBase64: expected.toString('base64'), size: expected.length, sha256: sha256(expected) });
  });

  it('bytes=false answers the size and sha256 alone, read from the machine', async () => {
    const full = await download({ machineID: 'P', dir, name: existing });
    const { status, body } = await download({ machineID: 'P', dir, name: existing, bytes: 'false' });
    expect(status).toBe(200);
    const data = body.data as FileData;
    expect(data).toEqual({ machineID: 'P', dir, name: existing, size: (full.body.data as FileData).size, sha256: (full.body.data as FileData).sha256 });
  });

  it('a missing file answers 404 PROGRAM_NOT_FOUND', async () => {
    const res = await download({ machineID: 'P', dir, name: 'O9999' });
    expect([res.status, res.body.errorCode]).toEqual([404, 2005]);
    expect(res.body.errorMsg).toContain("'O9999'");
  });
});

describe('program file upload', () => {
  it('a text upload round-trips: the download gives the same content, size and sha256', async () => {
    const content = '%\nO7001 (ROUND TRIP)\nG21 G90\nM30\n%\n';
    const res = await upload({ machineID: 'P', dir, name: 'O7001', content });
    expect([res.status, res.body.errorCode]).toEqual([200, 0]);
    expect(res.body.data).toEqual({ machineID: 'P', dir, name: 'O7001', size: Buffer.byteLength(content), sha256: sha256(content) });
    const back = (await download({ machineID: 'P', dir, name: 'O7001' })).body.data as FileData;
    expect(back).toMatchObject({ content, size: Buffer.byteLength(content), sha256: sha256(content) });
  });

  it('a base64 upload keeps every byte, a byte-order mark and non-ASCII text included', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('O7002 (FRÄSEN Ø12 — 端面)\nM30\n', 'utf8')]);
    const res = await upload({ machineID: 'P', dir, name: 'O7002.nc', contentBase64: bytes.toString('base64') });
    expect([res.status, res.body.errorCode]).toEqual([200, 0]);
    expect(res.body.data).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    const back = (await download({ machineID: 'P', dir, name: 'O7002.nc' })).body.data as FileData;
    expect(Buffer.from(back.contentBase64, 'base64').equals(bytes)).toBe(true);
    expect(back).toMatchObject({ content: bytes.toString('utf8'), encoding: 'utf-8', sha256: sha256(bytes) });
  });

  it('a program that is not UTF-8 (Windows-1252 comments, CRLF, tape characters) is kept byte for byte, and read as Windows-1252 text', async () => {
    const bytes = Buffer.from('\x12%\r\nO7008 (\xd8 25 SCHAFTFR\xc4SER \x96 \x80)\r\nM30\r\n%\r\n\x14\x00\x00', 'latin1');
    const res = await upload({ machineID: 'P', dir, name: 'O7008', contentBase64: bytes.toString('base64') });
    expect([res.status, res.body.errorCode]).toEqual([200, 0]);
    expect(res.body.data).toEqual({ machineID: 'P', dir, name: 'O7008', size: bytes.length, sha256: sha256(bytes) });
    expect((gateway.fleet.client('P') as SimulatorClient).machine.download(dir, 'O7008')).toEqual(bytes);
    const back = (await download({ machineID: 'P', dir, name: 'O7008' })).body.data as FileData;
    expect(Buffer.from(back.contentBase64, 'base64')).toEqual(bytes);
    expect(back).toMatchObject({ encoding: 'windows-1252', content: '\x12%\r\nO7008 (Ø 25 SCHAFTFRÄSER – €)\r\nM30\r\n%\r\n\x14\x00\x00', size: bytes.length, sha256: sha256(bytes) });
  });

  it('exactly one of content and contentBase64 is accepted', async () => {
    const both = await upload({ machineID: 'P', dir, name: 'O7003', content: 'M30', contentBase64: 'TTMw' });
    expect([both.status, both.body.errorCode]).toEqual([400, 2]);
    expect(both.body.errorMsg).toMatch(/contentBase64: found "TTMw"; give content or contentBase64, not both; accepted: \{machineID, dir, name, content\} or \{machineID, dir, name, contentBase64\}/);
    const neither = await upload({ machineID: 'P', dir, name: 'O7003' });
    expect([neither.status, neither.body.errorCode]).toEqual([400, 2]);
    expect(neither.body.errorMsg).toMatch(/content: found nothing; give content or contentBase64/);
    expect((await download({ machineID: 'P', dir, name: 'O7003' })).body.errorCode).toBe(2005);
  });

  it('base64 that is not base64 is rejected naming contentBase64', async () => {
    for (const contentBase64 of ['not base64!', 42]) {
      const garbage = await upload({ machineID: 'P', dir, name: 'O7004', contentBase64 });
      expect([garbage.status, garbage.body.errorCode]).toEqual([400, 2]);
      expect(garbage.body.errorMsg).toMatch(/contentBase64: found ("not base64!"|42); expected base64/);
    }
    expect((await download({ machineID: 'P', dir, name: 'O7004' })).body.errorCode).toBe(2005);
  });

  it('a program over 4 MiB is rejected naming the field and the limit; 4 MiB exactly is accepted', async () => {
    const limit = 4 * 1024 * 1024;
    expect(MAX_PROGRAM_BYTES).toBe(limit);
    const text = await upload({ machineID: 'P', dir, name: 'O7005', content: 'x'.repeat(limit + 1) });
    expect([text.status, text.body.errorCode]).toEqual([400, 2]);
    expect(text.body.errorMsg).toMatch(new RegExp(`content: found ${limit + 1} bytes; accepted: at most ${limit} bytes`));
    const b64 = await upload({ machineID: 'P', dir, name: 'O7005', contentBase64: Buffer.alloc(limit + 1, 0x41).toString('base64') });
    expect(b64.body.errorMsg).toMatch(new RegExp(`contentBase64: found ${limit + 1} bytes`));
    const fits = await upload({ machineID: 'P', dir, name: 'O7005', content: 'x'.repeat(limit) });
    expect(fits.body.data).toMatchObject({ size: limit });
  });
});

describe('program files: names, machines and input', () => {
  it('an unsafe name or directory is rejected on upload and download, naming the field', async () => {
    for (const name of ['../O1', '..', '.', 'a/b', 'a\\b', 'O1\u0000', 'O1\n', 'O1\u007f']) {
      const up = await upload({ machineID: 'P', dir, name, content: 'M30' });
      expect([up.status, up.body.errorCode], JSON.stringify(name)).toEqual([400, 2]);
      // U+0000 is refused by the body reader for every text field before the name's own rule is asked.
      expect(up.body.errorMsg).toMatch(name.includes('\u0000') ? /name: holds U\+0000 \(NUL\), which no text field takes/ : /name: found .*; must be a plain file name: no '\/', '\\', '\.\.' or control characters/);
      const down = await download({ machineID: 'P', dir, name });
      expect(down.status, JSON.stringify(name)).toBe(400);
    }
    const climb = await upload({ machineID: 'P', dir: `${dir}../../etc/`, name: 'O1', content: 'M30' });
    expect([climb.status, climb.body.errorCode]).toEqual([400, 2]);
    expect(climb.body.errorMsg).toMatch(/dir: found .*; must be a controller directory without '\.\.' segments/);
  });

  it('GW-94 an unknown or inactive machineID answers 10003', async () => {
    for (const [id, text] of [['ZZ', "'ZZ' does not exist"], ['OFF', "'OFF' is inactive"]] as const) {
      const down = await download({ machineID: id, dir, name: existing });
      expect([down.status, down.body.errorCode]).toEqual([404, 10003]);
      expect(down.body.errorMsg).toContain(text);
      const up = await upload({ machineID: id, dir, name: 'O7006', content: 'M30' });
      expect([up.status, up.body.errorCode]).toEqual([404, 10003]);
      expect(up.body.hint).toMatch(/list_machines/);
    }
  });

  it('a driver without the programFiles family answers 2001 naming it', async () => {
    for (const res of [await download({ machineID: 'NF', dir, name: existing }), await upload({ machineID: 'NF', dir, name: 'O7007', content: 'M30' })]) {
      expect([res.status, res.body.errorCode]).toEqual([200, 2001]);
      expect(res.body.errorMsg).toContain("driver 'simulator' does not support item family 'programFiles'");
    }
  });

  it('GW-95 a missing field or a wrong type answers 400 naming the field', async () => {
    const downloads: [Record<string, string | string[]>, RegExp][] = [
      [{ machineID: 'P', dir }, /name: found nothing/],
      [{ machineID: 'P', name: existing }, /dir: found nothing/],
      [{ dir, name: existing }, /machineID: found nothing/],
      [{ machineID: ['P', 'Q'], dir, name: existing }, /machineID: found \["P","Q"\]; expected string/],
    ];
    for (const [query, pattern] of downloads) {
      const res = (await gateway.http.inject({ method: 'GET', url: '/api/file/program/download', query })).json() as Body;
      expect(res.errorCode, JSON.stringify(query)).toBe(2);
      expect(res.errorMsg).toMatch(pattern);
    }
    const uploads: [Record<string, unknown>, RegExp][] = [
      [{ machineID: 'P', dir, content: 'M30' }, /name: found nothing/],
      [{ machineID: 'P', name: 'O1', content: 'M30' }, /dir: found nothing/],
      [{ dir, name: 'O1', content: 'M30' }, /machineID: found nothing/],
      [{ machineID: 'P', dir, name: 'O1', content: 42 }, /content: found 42; expected string/],
      [{ machineID: 'P', dir, name: 7, content: 'M30' }, /name: found 7; expected string/],
      [{ machineID: 'P', dir, name: 'O1', content: 'M30', owner: 'me' }, /unknown field\(s\) 'owner'/],
    ];
    for (const [body, pattern] of uploads) {
      const res = await upload(body);
      expect([res.status, res.body.errorCode], JSON.stringify(body)).toEqual([400, 2]);
      expect(res.body.errorMsg).toMatch(pattern);
    }
  });
});
