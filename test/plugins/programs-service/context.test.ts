/** Plugins of the program service meet through its context: services and events, without importing each other. */
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../../core/runtime/plugin-host.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import { startTestProgramService } from '../../fixtures/programs.js';

declare module '../../../core/roles/programs/context.js' {
  interface ProgramsEvents {
    'test.published': { versionId: string };
  }
  interface ProgramsServices {
    'test.clock-label': { label(): string };
  }
}

describe('the program service context', () => {
  it('carries services and events plugins contribute, and runs their migrations on programs.db', async () => {
    const heard: string[] = [];
    const provider = definePlugin<ProgramsContext>({
      name: 'test-provider',
      migrations: [{ id: 1, name: 'a table of its own', up: ['CREATE TABLE test_provider_rows (id INTEGER PRIMARY KEY)'] }],
      register(ctx) {
        ctx.services.provide('test.clock-label', { label: () => `t=${ctx.now()}` });
      },
    });
    const consumer = definePlugin<ProgramsContext>({
      name: 'test-consumer',
      dependsOn: ['test-provider'],
      register(ctx) {
        const label = ctx.services.get('test.clock-label');
        ctx.bus.on('test.published', ({ versionId }) => heard.push(`${versionId} at ${label.label()}`));
      },
    });
    const svc = await startTestProgramService({ plugins: [consumer, provider], now: () => 42 });
    try {
      svc.role.context.bus.emit('test.published', { versionId: 'ver_1' });
      expect(heard).toEqual(['ver_1 at t=42']);
      expect(svc.role.pluginNames()).toEqual(['test-provider', 'test-consumer']);
      const row = await svc.role.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM schema_migrations WHERE plugin = 'test-provider'");
      expect(row?.n).toBe(1);
    } finally {
      await svc.stop();
    }
  });
});
