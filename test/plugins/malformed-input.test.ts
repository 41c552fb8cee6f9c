/**
 * A battery of malformed input against every interface of the registry and
 * every MCP tool, as the administrator so that validation runs: no answer is
 * a 5xx, every answer is small and its message bounded, whatever the input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonSchema } from '../../core/http/json-schema.js';
import type { InterfaceDefinition } from '../../core/interfaces/registry.js';
import { MCP_PATH } from '../../plugins/mcp/index.js';
import { TOOLS } from '../../plugins/mcp/tools.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

/** Largest answer, and largest errorMsg, any malformed input may get. */
const MAX_ANSWER_BYTES = 4096;
const MAX_MESSAGE_CHARS = 2048;

interface PropertySchema {
  type?: string | string[];
  anyOf?: PropertySchema[];
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ machines: [simMachine('M1')], groups: [{ groupID: 'G1', name: 'G', machineIDs: ['M1'] }] });
});
afterAll(async () => {
  await gw?.stop();
});

function properties(schema: unknown): Record<string, PropertySchema> {
  return ((schema as { properties?: Record<string, PropertySchema> }).properties ?? {}) as Record<string, PropertySchema>;
}

function typesOf(p: PropertySchema): string[] {
  const t = p.type ?? p.anyOf?.flatMap((a) => typesOf(a));
  return Array.isArray(t) ? t : t ? [t] : [];
}

/** Values of every JSON kind, nested and not, except those the field accepts (a valid value could change settings). */
function wrongValues(p: PropertySchema, bytes: number): unknown[] {
  const types = typesOf(p);
  const all: [string, unknown][] = [
    ['number', 123],
    ['number', -1e308],
    ['string', 'str'],
    ['string', 'x'.repeat(bytes)],
    ['boolean', true],
    ['null', null],
    ['array', []],
    ['array', [[[[1]]]]],
    ['array', Array.from({ length: 2000 }, (_, i) => i)],
    ['object', {}],
    ['object', { a: { b: { c: 'x'.repeat(1000) } } }],
    ['object', Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`.repeat(20), i]))],
  ];
  return all.filter(([t]) => !types.includes(t) && !(t === 'number' && types.includes('integer'))).map(([, v]) => v);
}

/** A 60-deep value: under the depth limit, deep enough to test every describer. */
const deep = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

interface Answer {
  status: number;
  raw: string;
  label: string;
}

/** What is wrong with the answers: a 5xx, a failure answer that is not JSON, too large, or with an unbounded message. */
function problems(answers: Answer[]): string[] {
  const out: string[] = [];
  for (const a of answers) {
    if (a.status >= 500) out.push(`${a.label}: ${a.status} ${a.raw.slice(0, 200)}`);
    // A success may carry data of any size (the error log, a listing) or nothing (202 to a JSON-RPC batch without requests).
    if (a.status < 300 && (a.raw === '' || (JSON.parse(a.raw) as { errorCode?: number }).errorCode === 0)) continue;
    let message = '';
    try {
      const body = JSON.parse(a.raw) as { errorMsg?: string; error?: { message?: string }; result?: { content?: { text?: string }[] } };
      message = body.errorMsg ?? body.error?.message ?? body.result?.content?.[0]?.text ?? '';
    } catch {
      out.push(`${a.label}: answer is not JSON: ${a.raw.slice(0, 100)}`);
    }
    if (a.raw.length > MAX_ANSWER_BYTES) out.push(`${a.label}: answer of ${a.raw.length} bytes`);
    if (message.length > MAX_MESSAGE_CHARS) out.push(`${a.label}: message of ${message.length} characters`);
  }
  return out;
}

async function post(path: string, payload: string, contentType: string | null = 'application/json', extra: Record<string, string> = {}): Promise<Answer> {
  const res = await gw.gateway.http.inject({
    method: 'POST',
    url: path,
    headers: { ...(contentType ? { 'content-type': contentType } : {}), authorization: `Bearer ${gw.adminToken}`, ...extra },
    payload,
  });
  return { status: res.statusCode, raw: res.body, label: `${path} ${payload.slice(0, 40)}` };
}

/** Raw bodies wrong in form rather than in a field. */
const RAW_BODIES: [string, string | null][] = [
  ['{bad', 'application/json'],
  ['{"a":', 'application/json'],
  ['[1,]', 'application/json'],
  ['', 'application/json'],
  ['[]', 'application/json'],
  ['"text"', 'application/json'],
  ['42', 'application/json'],
  ['null', 'application/json'],
  ['true', 'application/json'],
  ['{"__proto__":{"isAdmin":true}}', 'application/json'],
  ['{"constructor":{"prototype":{"isAdmin":true}}}', 'application/json'],
  [`${'['.repeat(3000)}${']'.repeat(3000)}`, 'application/json'],
  [`${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`, 'application/json'],
  [`"${'\\u0000'.repeat(5000)}"`, 'application/json'],
  ['hello', 'text/plain'],
  ['<a/>', 'application/xml'],
  ['a=1&b=2', 'application/x-www-form-urlencoded'],
  ['{"a":1}', null],
  ['{"a":1}', 'application/json; charset=latin1'],
];

describe('malformed input never gives a 5xx, and every answer is small', () => {
  it('every POST interface: malformed bodies, wrong types and huge values at every field, deep values, __proto__ keys', async () => {
    const defs = gw.gateway.context.interfaces.list().filter((d) => d.method === 'POST');
    const answers: Answer[] = [];
    for (const def of defs) {
      for (const [payload, type] of RAW_BODIES) answers.push(await post(def.path, payload, type));
      const props = properties(toJsonSchema(def.input, 'input'));
      for (const [name, p] of Object.entries(props)) {
        for (const value of [...wrongValues(p, 30_000), deep(60)]) answers.push(await post(def.path, JSON.stringify({ [name]: value })));
      }
      answers.push(await post(def.path, JSON.stringify(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`unknown${i}`, i])))));
    }
    expect(answers.length).toBeGreaterThan(defs.length * RAW_BODIES.length);
    expect(problems(answers)).toEqual([]);
  });

  it('every GET interface: repeated keys, huge values, arrays where scalars go, bad percent-encoding', async () => {
    const defs: InterfaceDefinition[] = gw.gateway.context.interfaces.list().filter((d) => d.method === 'GET');
    const answers: Answer[] = [];
    const get = async (path: string, query: string) => {
      const res = await gw.gateway.http.inject({ method: 'GET', url: `${path}?${query}`, headers: { authorization: `Bearer ${gw.adminToken}` } });
      answers.push({ status: res.statusCode, raw: res.body, label: `${path}?${query.slice(0, 60)}` });
    };
    for (const def of defs) {
      await get(def.path, '%ZZ=%E0%A4%A&=&&==');
      await get(def.path, `unknown=${'x'.repeat(100_000)}`);
      for (const name of Object.keys(properties(toJsonSchema(def.input, 'input')))) {
        await get(def.path, `${name}=a&${name}=b&${name}=c`);
        await get(def.path, `${name}=${'x'.repeat(100_000)}`);
        await get(def.path, `${name}=${'x,'.repeat(20_000)}`);
        await get(def.path, `${name}[]=1&${name}[0]=2&${name}[a]=3`);
        await get(def.path, `${name}=`);
        await get(def.path, `${name}=%00%FF`);
        await get(def.path, `${name}=${encodeURIComponent(JSON.stringify(deep(60)))}`);
      }
    }
    expect(problems(answers)).toEqual([]);
  });

  it('/mcp: malformed bodies and every tool with wrong types and huge values at every argument', async () => {
    const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const answers: Answer[] = [];
    for (const [payload, type] of RAW_BODIES) answers.push(await post(MCP_PATH, payload, type, headers));
    const call = (name: string, args: unknown) => post(MCP_PATH, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }), 'application/json', headers);
    answers.push(await call('x'.repeat(30_000), {}));
    for (const tool of TOOLS) {
      for (const args of [[], 'text', 42, null, deep(60)]) answers.push(await call(tool.name, args));
      for (const [name, p] of Object.entries(properties(toJsonSchema(tool.input, 'input')))) {
        for (const value of [...wrongValues(p, 30_000), deep(60)]) answers.push(await call(tool.name, { [name]: value }));
      }
    }
    expect(problems(answers)).toEqual([]);
  });
});
