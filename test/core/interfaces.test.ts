import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { pino } from 'pino';
import { defineEntry, InterfaceRegistry, queryBool, queryList, type InterfaceEntry, type Principal } from '../../core/interfaces/registry.js';
import { groupConfigSchema, type GroupConfig } from '../../core/roles/gateway/machine-config.js';
import { groupListOutput } from '../../core/roles/gateway/api-outputs.js';
import { CONFIGURATION } from '../../core/roles/gateway/contract/configuration.js';
import { ERRORS, GatewayError } from '../../core/interfaces/errors.js';
import { createHttpApp, serveInterfaces } from '../../core/http/http-server.js';

const logger = pino({ level: 'silent' });
const alice: Principal = { username: 'alice', isAdmin: false, method: 'jwt' };

const READ_THING = defineEntry({
  path: '/api/cnc/readThing',
  method: 'GET',
  summary: 'test',
  input: z.object({ machineID: z.string(), detailed: queryBool().optional(), items: queryList(z.enum(['a', 'b'])).optional() }).strict(),
  output: z.unknown(),
  errors: [],
});
const FAIL = defineEntry({ path: '/api/cnc/fail', method: 'POST', summary: 'test', input: z.object({}), output: z.unknown(), errors: [] });

function registry() {
  const r = new InterfaceRegistry(logger);
  r.implement(READ_THING, { handler: (input, ctx) => ({ input, caller: ctx.principal.username }) });
  r.implement(FAIL, {
    handler: () => {
      throw new Error('disk on fire at /var/secret/path');
    },
  });
  return r;
}

describe('interface registry', () => {
  it('GW-03 call() runs an interface through the same pipeline as HTTP, with the caller identity', async () => {
    const r = registry();
    const viaCall = await r.call(READ_THING, { machineID: 'M1', detailed: 'true', items: 'a,b' }, { principal: alice });
    expect(viaCall).toEqual({ ok: true, data: { input: { machineID: 'M1', detailed: true, items: ['a', 'b'] }, caller: 'alice' } });

    const app = createHttpApp(logger);
    serveInterfaces(app, r);
    const res = await app.inject({ method: 'GET', url: '/api/cnc/readThing?machineID=M1&detailed=true&items=a,b' });
    expect(res.json()).toEqual({ errorCode: 0, errorMsg: 'OK', data: { input: { machineID: 'M1', detailed: true, items: ['a', 'b'] }, caller: null } });
    await app.close();
  });

  it('GW-76 the access policy is asked per interface path, and a refusal is FORBIDDEN', async () => {
    const r = registry();
    const asked: string[] = [];
    r.setAccessPolicy({
      authenticate: () => alice,
      authorize: (principal, def) => {
        asked.push(`${principal.username}:${def.permission ?? def.path}`);
        throw new GatewayError('FORBIDDEN', `${def.path} is not in the authorised API list`);
      },
      principalFor: () => undefined,
    });
    const result = await r.call(READ_THING, { machineID: 'M1' }, { principal: alice });
    expect(asked).toEqual(['alice:/api/cnc/readThing']);
    expect(result.ok).toBe(false);
    if (!result.ok) expect([result.error.errorName, result.error.httpStatus]).toEqual(['FORBIDDEN', 403]);
  });

  it('GW-95 validation errors name the field and list the accepted values', async () => {
    const r = registry();
    // An input as a caller outside TypeScript may send it.
    const result = await r.call<InterfaceEntry>(READ_THING, { machineID: 5, items: 'a,z' }, { principal: alice });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.errorCode).toBe(ERRORS.INVALID_PARAMETER.code);
      expect(result.error.message).toMatch(/machineID: found 5; expected string/);
      expect(result.error.message).toMatch(/items\[1\]: found "z";.*"a"\|"b"/);
    }
  });

  it('an unexpected failure becomes UNKNOWN_ERROR with no internals, and is reported to the error listeners', async () => {
    const r = registry();
    const seen: string[] = [];
    r.onError((e) => seen.push(`${e.path} ${e.error.errorCode}`));
    const app = createHttpApp(logger);
    serveInterfaces(app, r);
    const res = await app.inject({ method: 'POST', url: '/api/cnc/fail', payload: {} });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ errorCode: 1, errorMsg: 'Internal error.' });
    expect(res.body).not.toContain('secret');
    expect(seen).toEqual(['/api/cnc/fail 1']);
    await app.close();
  });

  it('an entry types its handler and what call() answers: an implementation answering another type does not compile', async () => {
    const r = new InterfaceRegistry(logger);
    const group = groupConfigSchema.parse({ groupID: 'G1', name: 'Cell', machineIDs: ['M1'] });
    r.implement(CONFIGURATION.groups, { handler: () => [group] });
    // @ts-expect-error -- the handler must answer the entry's output type
    r.implement(CONFIGURATION.group, { handler: () => 42 });
    const listed = await r.call(CONFIGURATION.groups, {}, { principal: alice });
    expectTypeOf(listed).toEqualTypeOf<{ ok: true; data: GroupConfig[] } | { ok: false; error: GatewayError }>();
    expect(listed).toEqual({ ok: true, data: [group] });
    // @ts-expect-error -- and its input is the entry's input
    await r.call(CONFIGURATION.group, { machineID: 'M1' }, { principal: alice });
  });

  it('under the test suite an answer that does not match its output schema is noted, naming the interface and the field', async () => {
    expect(InterfaceRegistry.checkOutputs).toBe(true);
    const r = new InterfaceRegistry(logger);
    const entry = defineEntry({ path: '/api/config/groups', method: 'GET', summary: 'test', input: z.object({}), output: groupListOutput, errors: [] });
    r.implement(entry, { handler: () => [{ ...groupConfigSchema.parse({ groupID: 'G1', name: 'Cell' }), isActive: 'yes' }] as unknown as GroupConfig[] });
    expect((await r.call(entry, {}, { principal: alice })).ok).toBe(true);
    // Taken out here, or the suite's setup would fail this test for it.
    const noted = InterfaceRegistry.outputMismatches.splice(0);
    expect(noted).toHaveLength(1);
    expect(noted[0]).toMatch(/^\/api\/config\/groups: \[0\]\.isActive: /);
  });

  it('refuses to define the same path twice or a path outside /api', () => {
    const r = registry();
    expect(() => r.implement(FAIL, { handler: () => 1 })).toThrow(/defined twice/);
    expect(() => r.implement({ ...FAIL, path: '/x' as '/api/x' }, { handler: () => 1 })).toThrow(/must start with \/api\//);
  });
});

describe('error table', () => {
  it('GW-92 a tool error reads "{path} failed: {NAME}({code}) {description}. Hint: {hint}"', () => {
    const e = new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', "machineID 'X' does not exist");
    expect(e.toToolMessage('/api/config/machine')).toBe(
      "/api/config/machine failed: GENERAL_MACHINE_ID_NOT_EXISTED(10003) Unknown or inactive machineID. machineID 'X' does not exist. Hint: Call list_machines (GET /api/config/machines) for valid machineIDs.",
    );
  });

  it('GW-90 every entry has a unique Int32 errorCode, a status, a description and (except OK) a hint', () => {
    const codes = Object.values(ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const [name, e] of Object.entries(ERRORS)) {
      expect(Number.isInteger(e.code) && e.code >= 0 && e.code < 2 ** 31).toBe(true);
      expect(e.http).toBeGreaterThanOrEqual(200);
      expect(e.description.length).toBeGreaterThan(3);
      if (name !== 'OK') expect(e.hint.length).toBeGreaterThan(3);
    }
    expect(ERRORS.IP_NOT_IN_WHITE_LIST).toMatchObject({ code: 7, http: 401, description: 'IP not in white list.' });
    expect(ERRORS.TASK_NOT_READY).toMatchObject({ code: 1303, http: 200 });
  });
});
