/**
 * Liveness and readiness (core/runtime/health.ts through RoleRuntime): /healthz
 * answers while the process lives; /readyz is 503 until the database
 * answers, the plugins started and the listener is up, while any check a
 * part added fails, and from the moment a stop begins; neither needs
 * credentials, and neither says more than each check's name and ok/failing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { createRestApp } from '../../core/rest/serve.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';

const logger = pino({ level: 'silent' });
const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

async function openRole() {
  const runtime = await RoleRuntime.open({ role: 'example', dataDir: mkdtempSync(join(tmpdir(), 'health-')), databaseFile: 'example.db', logger, now: Date.now });
  toClose.push(() => runtime.stop());
  return runtime;
}

const getJson = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, cache: res.headers.get('cache-control'), body: (await res.json()) as unknown };
};

describe('health and readiness', () => {
  it('not ready before the listener is up; ready with database, plugins and listener ok; no credentials needed', async () => {
    const runtime = await openRole();
    const app = createRestApp(logger);
    // A surface that authenticates every route of its own still serves the probes to anyone.
    app.get('/private', { onRequest: async (_request, reply) => reply.code(401).send({ refused: true }) }, async () => 'never');
    await runtime.startPlugins([], {}, app);
    await app.ready();
    expect(await runtime.readiness.report()).toEqual({ ready: false, checks: { database: 'ok', plugins: 'ok', listener: 'failing' } });
    const url = await runtime.listen('127.0.0.1', 0);
    expect(await getJson(`${url}/healthz`)).toEqual({ status: 200, cache: 'no-store', body: { status: 'ok' } });
    expect(await getJson(`${url}/readyz`)).toEqual({ status: 200, cache: 'no-store', body: { status: 'ready', checks: { database: 'ok', plugins: 'ok', listener: 'ok' } } });
    expect((await fetch(`${url}/private`)).status).toBe(401);
  });

  it('a failing or throwing check makes it 503, naming the check and nothing of why', async () => {
    const runtime = await openRole();
    const app = createRestApp(logger);
    let brokerUp = false;
    runtime.readiness.add('broker', () => brokerUp);
    runtime.readiness.add('drivers', () => {
      throw new Error('secret internal detail: host 10.1.2.3 refused');
    });
    await runtime.startPlugins([], {}, app);
    await app.ready();
    const url = await runtime.listen('127.0.0.1', 0);
    const answer = await fetch(`${url}/readyz`);
    const text = await answer.text();
    expect(answer.status).toBe(503);
    expect(JSON.parse(text)).toEqual({ status: 'not-ready', checks: { database: 'ok', plugins: 'ok', listener: 'ok', broker: 'failing', drivers: 'failing' } });
    expect(text).not.toContain('10.1.2.3');
    brokerUp = true;
    runtime.readiness.add('drivers', () => true);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    // Liveness does not depend on readiness.
    brokerUp = false;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('not ready from the moment a stop begins, while the plugins still stop', async () => {
    const runtime = await openRole();
    const app = createRestApp(logger);
    let release: () => void = () => undefined;
    const slowStop = new Promise<void>((resolve) => (release = resolve));
    let stopping: (() => void) | undefined;
    const reached = new Promise<void>((resolve) => (stopping = resolve));
    const plugin = definePlugin<object>({ name: 'slow', register: () => ({ stop: async () => { stopping?.(); await slowStop; } }) });
    await runtime.startPlugins([plugin], {}, app);
    await app.ready();
    await runtime.listen('127.0.0.1', 0);
    expect((await runtime.readiness.report()).ready).toBe(true);
    const stopped = runtime.stop();
    await reached;
    expect(await runtime.readiness.report()).toEqual({ ready: false, checks: { database: 'ok', plugins: 'ok', listener: 'failing', stopping: 'failing' } });
    release();
    await stopped;
  });

  it('a check name is a short word, as it is shown to anyone', async () => {
    const runtime = await openRole();
    expect(() => runtime.readiness.add('Database at /var/lib/x', () => true)).toThrow(/must match/);
  });
});
