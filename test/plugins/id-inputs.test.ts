/**
 * machineIDs and groupIDs in every interface and MCP tool that takes one are
 * checked with the pattern and length limit creating the object uses, and an
 * error message never repeats a client's value at length.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_MAX_LENGTH, ID_PATTERN } from '../../core/roles/gateway/machine-config.js';
import { QUOTE_MAX_CHARS, quote, quoteList } from '../../core/interfaces/errors.js';
import { toJsonSchema } from '../../core/http/json-schema.js';
import { MCP_PATH } from '../../plugins/mcp/index.js';
import { TOOLS } from '../../plugins/mcp/tools.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

/** Largest answer an ill-formed ID may get. */
const MAX_ANSWER_BYTES = 2048;
const ID_FIELDS = ['machineID', 'groupID', 'machineIDs'] as const;
const BAD_IDS = { 'over-long': 'A'.repeat(7000), 'ill-formed': 'bad id/../!', 'one too long': 'A'.repeat(ID_MAX_LENGTH + 1) };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ machines: [simMachine('M1')], groups: [{ groupID: 'G1', name: 'G', machineIDs: ['M1'] }] });
});
afterAll(async () => {
  await gw?.stop();
});

function idFields(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return ID_FIELDS.filter((f) => f in props);
}

/** The ID field the message names: machineIDs items are reported as machineIDs[0]. */
const named = (field: string) => (field === 'machineIDs' ? 'machineIDs[0]' : field);

describe('IDs are checked wherever they are taken', () => {
  it('every interface with an ID field answers an over-long or ill-formed ID with 400 naming the field and the pattern, in a small answer', async () => {
    const defs = gw.gateway.context.interfaces.list().filter((d) => idFields(toJsonSchema(d.input, 'input')).length > 0);
    // Interfaces whose input is a whole config parsed by the config schema take the ID from it too.
    const configInputs = ['/api/config/machine/add', '/api/config/group/add'];
    const paths = [...defs.map((d) => d.path), ...configInputs];
    expect(paths.length).toBeGreaterThanOrEqual(15);
    const failures: string[] = [];
    for (const path of paths) {
      const def = gw.gateway.context.interfaces.get(path);
      if (!def) throw new Error(`no interface ${path}`);
      const fields = idFields(toJsonSchema(def.input, 'input'));
      for (const field of fields.length ? fields : [path.includes('group') ? 'groupID' : 'machineID']) {
        for (const [kind, id] of Object.entries(BAD_IDS)) {
          const value = field === 'machineIDs' ? [id] : id;
          const res =
            def.method === 'GET'
              ? await gw.request('GET', `${path}?${new URLSearchParams({ [field]: id })}`)
              : await gw.request('POST', path, { [field]: value });
          const ok = res.status === 400 && res.body.errorCode === 2 && res.body.errorMsg.includes(`${named(field)}:`) && res.body.errorMsg.includes(ID_PATTERN.source) && res.raw.length <= MAX_ANSWER_BYTES;
          if (!ok) failures.push(`${def.method} ${path} ${field} ${kind}: ${res.status} ${res.raw.length} bytes ${res.raw.slice(0, 160)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('every MCP tool with an ID argument answers an over-long or ill-formed ID with a tool error naming the field and the pattern', async () => {
    const tools = TOOLS.filter((t) => idFields(toJsonSchema(t.input, 'input')).length > 0);
    expect(tools.length).toBeGreaterThanOrEqual(6);
    const failures: string[] = [];
    for (const tool of tools) {
      for (const field of idFields(toJsonSchema(tool.input, 'input'))) {
        for (const [kind, id] of Object.entries(BAD_IDS)) {
          const res = await gw.gateway.http.inject({
            method: 'POST',
            url: MCP_PATH,
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', authorization: `Bearer ${gw.adminToken}` },
            payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: { [field]: field === 'machineIDs' ? [id] : id } } },
          });
          const result = (res.json() as { result?: { isError?: boolean; content?: { text: string }[] } }).result;
          const text = result?.content?.[0]?.text ?? '';
          const ok = result?.isError === true && text.includes(`${named(field)}:`) && text.includes(ID_PATTERN.source) && res.body.length <= MAX_ANSWER_BYTES;
          if (!ok) failures.push(`${tool.name} ${field} ${kind}: ${res.body.length} bytes ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('the OpenAPI document shows every ID field with its pattern and maxLength', async () => {
    const failures: string[] = [];
    for (const def of gw.gateway.context.interfaces.list()) {
      const props = (toJsonSchema(def.input, 'input') as { properties?: Record<string, { pattern?: string; maxLength?: number; items?: { pattern?: string; maxLength?: number } }> }).properties ?? {};
      for (const field of ID_FIELDS) {
        const p = props[field];
        if (!p) continue;
        const s = field === 'machineIDs' ? p.items : p;
        if (s?.pattern !== ID_PATTERN.source || s.maxLength !== ID_MAX_LENGTH) failures.push(`${def.path} ${field}: ${JSON.stringify(p)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('quoting a client value', () => {
  it(`quote cuts a value to ${QUOTE_MAX_CHARS} characters with an ellipsis and the full length; quoteList lists at most 5`, () => {
    expect(quote('M1')).toBe("'M1'");
    const long = quote('x'.repeat(7_000_000));
    expect(long.length).toBeLessThan(QUOTE_MAX_CHARS + 40);
    expect(long).toContain('…');
    expect(long).toContain('7000000');
    const list = quoteList(Array.from({ length: 1000 }, (_, i) => `M${i}`));
    expect(list).toBe("'M0', 'M1', 'M2', 'M3', 'M4' and 995 more");
  });

  it('an unknown path in a 404 is quoted, not repeated whole', async () => {
    const res = await gw.gateway.http.inject({ method: 'GET', url: `/api/${'x'.repeat(100_000)}` });
    expect(res.statusCode).toBe(404);
    expect(res.body.length).toBeLessThan(MAX_ANSWER_BYTES);
  });
});
