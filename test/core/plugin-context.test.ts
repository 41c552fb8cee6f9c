/**
 * What plugins add to the gateway context without editing core: events of
 * their own on the bus (declaration merging on GatewayEvents), and services
 * other plugins use (declaration merging on GatewayServices). The plugins
 * here are test-only and meet through the context alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { EventBus } from '../../core/runtime/event-bus.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { ServiceError, ServiceRegistry } from '../../core/runtime/services.js';
import { simMachine, startTestGateway, TEST_PLUGINS, type TestGateway } from '../fixtures/gateway.js';

declare module '../../core/roles/gateway/events.js' {
  interface GatewayEvents {
    'example.machine-retired': { machineID: string; retiredAt: number };
  }
}

declare module '../../core/roles/gateway/context.js' {
  interface GatewayServices {
    'example.retirements': { list(): readonly string[] };
    'example.absent': { never(): void };
  }
}

/** Turns core's `machine.deleted` into its own event, and provides the list of retirements as a service. */
const retirementsPlugin = definePlugin<GatewayContext>({
  name: 'example-retirements',
  register(ctx) {
    const retired: string[] = [];
    ctx.services.provide('example.retirements', { list: () => retired });
    const offDeleted = ctx.bus.on('machine.deleted', ({ machineID }) => ctx.bus.emit('example.machine-retired', { machineID, retiredAt: ctx.now() }));
    const offRetired = ctx.bus.on('example.machine-retired', ({ machineID }) => void retired.push(machineID));
    return {
      stop: () => {
        offDeleted();
        offRetired();
      },
    };
  },
});

/** Listens to the other plugin's event and uses its service, importing neither. */
function reportPlugin(seen: { events: { machineID: string; retiredAt: number }[]; list?: () => readonly string[] }) {
  return definePlugin<GatewayContext>({
    name: 'example-report',
    dependsOn: ['example-retirements'],
    register(ctx) {
      const service = ctx.services.get('example.retirements');
      seen.list = () => service.list();
      expect(ctx.services.find('example.absent')).toBeUndefined();
      return { stop: ctx.bus.on('example.machine-retired', (event) => void seen.events.push(event)) };
    },
  });
}

describe('plugin context extensions', () => {
  let gw: TestGateway;
  const seen: { events: { machineID: string; retiredAt: number }[]; list?: () => readonly string[] } = { events: [] };

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('M1'), simMachine('M2')] }, undefined, {
      plugins: [...TEST_PLUGINS, reportPlugin(seen), retirementsPlugin],
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("a plugin's own event, declared by merging into GatewayEvents, reaches another plugin through the gateway's bus", async () => {
    const res = await gw.request('POST', '/api/config/machine/delete', { machineID: 'M2' });
    expect(res.body.errorCode).toBe(0);
    expect(seen.events.map((e) => e.machineID)).toEqual(['M2']);
    expect(typeof seen.events[0]?.retiredAt).toBe('number');
    expect(gw.gateway.context.bus.listenerCount('example.machine-retired')).toBe(2);
  });

  it('a service one plugin provides is used by a plugin that depends on it, by name and type, without an import', () => {
    // Beside the built-in plugins' own services (the gateway's identity, the cloud link's status, the northbound targets, the MTConnect agent's address).
    expect(gw.gateway.context.services.names()).toEqual(['gateway-identity', 'cloud-link', 'northbound', 'mtconnect-agent', 'example.retirements']);
    expect(seen.list?.()).toEqual(['M2']);
  });

  it('a plugin that asks for a service nobody provides fails to start, naming the service, the provided ones and the fix', async () => {
    const needy = definePlugin<GatewayContext>({
      name: 'example-needy',
      register: (ctx) => void ctx.services.get('example.absent'),
    });
    await expect(startTestGateway({}, undefined, { plugins: [...TEST_PLUGINS, needy] })).rejects.toThrow(
      "plugin 'example-needy' failed to start: gateway service 'example.absent' is not provided (provided: gateway-identity, cloud-link, northbound, mtconnect-agent); list the plugin that provides it in dependsOn",
    );
  });
});

describe('the generic event bus', () => {
  interface ProgramEvents {
    'version.published': { versionId: string };
    'version.obsoleted': { versionId: string; reason: string };
  }

  it('carries any event map; listeners run in order, one that throws is logged and the others still run; off() stops one', () => {
    const logged: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push((JSON.parse(line) as { msg: string; event: string }).event) });
    const bus = new EventBus<ProgramEvents>(logger);
    const got: string[] = [];
    bus.on('version.published', ({ versionId }) => void got.push(`a ${versionId}`));
    bus.on('version.published', () => {
      throw new Error('listener bug');
    });
    const off = bus.on('version.published', ({ versionId }) => void got.push(`c ${versionId}`));
    bus.on('version.obsoleted', ({ versionId, reason }) => void got.push(`obsoleted ${versionId}: ${reason}`));
    bus.emit('version.published', { versionId: 'v1' });
    off();
    bus.emit('version.published', { versionId: 'v2' });
    bus.emit('version.obsoleted', { versionId: 'v1', reason: 'superseded' });
    expect(got).toEqual(['a v1', 'c v1', 'a v2', 'obsoleted v1: superseded']);
    expect(logged).toEqual(['version.published', 'version.published']);

    // The map is checked at compile time (npm run typecheck): an unknown event or a wrong payload does not compile.
    // @ts-expect-error 'machine.saved' is not an event of ProgramEvents
    bus.on('machine.saved', () => undefined);
    // @ts-expect-error versionId must be a string
    bus.emit('version.published', { versionId: 1 });
    expect(bus.listenerCount('version.published')).toBe(2);
  });
});

describe('the service registry', () => {
  interface Services {
    clock: { now(): number };
  }

  it('refuses a name provided twice and a malformed name, naming the accepted form', () => {
    const services = new ServiceRegistry<Services>('programs');
    services.provide('clock', { now: () => 1 });
    expect(services.get('clock').now()).toBe(1);
    expect(() => services.provide('clock', { now: () => 2 })).toThrow(new ServiceError("programs service 'clock' is provided twice"));
    const loose = services as unknown as ServiceRegistry<Record<string, unknown>>;
    expect(() => loose.provide('no spaces allowed', {})).toThrow(/programs service name "no spaces allowed" is not accepted; accepted: 1-64 letters and digits/);
    expect(() => loose.provide('x'.repeat(65), {})).toThrow(/is not accepted/);
  });
});
