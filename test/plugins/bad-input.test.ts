/**
 * Bad input for every interface, generated from the registry: a missing
 * required field, a wrong type and an unknown machineID each give a 4xx whose
 * message names the field (and, for enums, the accepted values) — never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonSchema } from '../../core/http/json-schema.js';
import type { InterfaceDefinition } from '../../core/interfaces/registry.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: PropertySchema[];
  items?: PropertySchema;
}
interface ObjectSchema {
  type?: string;
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ machines: [simMachine('M1')], groups: [{ groupID: 'G1', name: 'G', machineIDs: ['M1'] }] });
});
afterAll(async () => {
  await gw?.stop();
});

function typeOf(p: PropertySchema): string {
  if (p.enum) return 'enum';
  const t = p.type ?? p.anyOf?.map((a) => a.type).find((x) => x && x !== 'null');
  return (Array.isArray(t) ? t.find((x) => x !== 'null') : t) ?? 'any';
}

/** A value of the right kind for a field, so that only the field under test is wrong. */
function plausible(name: string, p: PropertySchema): unknown {
  if (p.enum) return p.enum[0];
  switch (typeOf(p)) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return name === 'dir' ? '//CNC_MEM/USER/PATH1/' : name === 'name' ? 'O1234' : 'x';
  }
}

/** A value of the wrong kind, as it can travel in the interface's transport (a query string carries only text). */
function wrong(p: PropertySchema, get: boolean): unknown | undefined {
  const t = typeOf(p);
  if (t === 'enum') return 'NoSuchValue';
  if (t === 'integer' || t === 'number') return 'not-a-number';
  if (t === 'boolean') return 'maybe';
  if (t === 'array') return get ? undefined : 'not-a-list';
  if (t === 'string') return get ? undefined : 12345;
  return undefined;
}

async function call(def: InterfaceDefinition, input: Record<string, unknown>) {
  if (def.method === 'GET') {
    const query = new URLSearchParams(Object.entries(input).map(([k, v]): [string, string] => [k, Array.isArray(v) ? v.join(',') : String(v)]));
    return gw.request('GET', `${def.path}?${query}`);
  }
  return gw.request('POST', def.path, input);
}

function objectSchema(def: InterfaceDefinition): ObjectSchema {
  return toJsonSchema(def.input, 'input') as ObjectSchema;
}

describe('bad input for every interface', () => {
  it('missing required field: 400 naming the field', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const def of gw.gateway.context.interfaces.list()) {
      const schema = objectSchema(def);
      const required = schema.required ?? [];
      if (required.length === 0) continue;
      checked++;
      const res = await call(def, {});
      if (res.status !== 400 || !required.some((f) => res.body.errorMsg.includes(f))) {
        failures.push(`${def.path}: ${res.status} ${res.body.errorMsg}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(15);
  });

  it('GW-95 wrong type: 400 naming the field, and for enums the accepted values', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const def of gw.gateway.context.interfaces.list()) {
      const schema = objectSchema(def);
      for (const [field, prop] of Object.entries(schema.properties ?? {})) {
        const bad = wrong(prop, def.method === 'GET');
        if (bad === undefined) continue;
        const input: Record<string, unknown> = {};
        for (const r of schema.required ?? []) input[r] = plausible(r, schema.properties?.[r] ?? {});
        if ('machineID' in input) input.machineID = 'M1';
        if ('groupID' in input) input.groupID = 'G1';
        input[field] = bad;
        checked++;
        const res = await call(def, input);
        const named = res.body.errorMsg.includes(field);
        const listsValues = !prop.enum || prop.enum.every((v) => res.body.errorMsg.includes(String(v)));
        if (res.status !== 400 || !named || !listsValues) failures.push(`${def.path} ${field}=${JSON.stringify(bad)}: ${res.status} ${res.body.errorMsg}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('GW-94 unknown machineID: 404 with 10003 and a hint to list the machines', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const def of gw.gateway.context.interfaces.list()) {
      const schema = objectSchema(def);
      if (!schema.properties?.machineID || def.path.endsWith('/add')) continue;
      const input: Record<string, unknown> = {};
      for (const r of schema.required ?? []) input[r] = plausible(r, schema.properties[r] ?? {});
      input.machineID = 'NO-SUCH-MACHINE';
      // Upload needs one of content/contentBase64, a rule the object schema cannot express.
      if (schema.properties.content) input.content = 'G0 X0';
      checked++;
      const res = await call(def, input);
      if (res.status !== 404 || res.body.errorCode !== 10003 || !/list_machines/.test(res.body.hint ?? '')) {
        failures.push(`${def.path}: ${res.status} ${res.body.errorCode} ${res.body.errorMsg}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(15);
  });
});
