/**
 * Plugins and roles declare the parts of the configuration they read
 * (core/config/config-parts.ts): the file is parsed once with the base and every
 * part of every role compiled in, a mistake names its path whoever owns it
 * and whichever roles run, a field declared twice stops the start naming
 * both owners, and a plugin is given its part's settings.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, configNotices, configWrites, parseConfig } from '../../core/config/config.js';
import { ConfigPartError, configSchema, readPart, type ConfigPart } from '../../core/config/config-parts.js';
import { definePlugin, PluginError, PluginHost } from '../../core/runtime/plugin-host.js';
import { configPartsOf, defineRole, startRoles, type RoleDefinition } from '../../core/runtime/role.js';

const logger = pino({ level: 'silent' });

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const notesPart = {
  section: 'notes',
  fields: {
    keepDays: z.number().int().min(1).max(3650).default(30),
    title: z.string().min(1).max(64).default('Notes'),
  },
} satisfies ConfigPart;

/** A role of its own with one plugin, each declaring a part; it never starts in these tests. */
function role(name: string, parts: readonly ConfigPart[], pluginParts: Record<string, ConfigPart> = {}): RoleDefinition {
  return defineRole({
    name,
    databaseFile: `${name}.db`,
    startsByDefault: false,
    stopRank: 1,
    config: parts,
    plugins: Object.entries(pluginParts).map(([plugin, config]) => definePlugin<object>({ name: plugin, config, register: () => undefined })),
    commands: [],
    start: () => Promise.reject(new Error(`${name} does not start here`)),
  });
}

describe('configuration parts', () => {
  it("a plugin's section is parsed with its fields: defaults when absent, values when given, and a mistake names its path", () => {
    const parts = configPartsOf([role('notes', [], { 'notes-api': notesPart })]);
    expect(parseConfig({}, 'plant.json', {}, parts)).toMatchObject({ notes: { keepDays: 30, title: 'Notes' }, dataDir: './data', roles: [] });
    expect(parseConfig({ notes: { keepDays: 7 } }, 'plant.json', {}, parts)).toMatchObject({ notes: { keepDays: 7, title: 'Notes' } });
    expect(problems(() => parseConfig({ notes: { keepDays: 0, colour: 'red' } }, 'plant.json', {}, parts))).toEqual([
      'notes.keepDays: found 0; Too small: expected number to be >=1',
      "notes: unknown field(s) 'colour'; remove them",
    ]);
    // Without the part, the section is unknown.
    expect(problems(() => parseConfig({ notes: {} }, 'plant.json', {}, []))).toEqual(["(root): unknown field(s) 'notes'; remove them"]);
  });

  it("a mistake in the section of a role that does not run stops the start all the same, naming its path", async () => {
    const roles = [role('notes', [notesPart]), role('other', [])];
    const parts = configPartsOf(roles);
    const config = () => parseConfig({ notes: { title: '' }, gateway: { dataDir: mkdtempSync(join(tmpdir(), 'parts-')) } }, 'plant.json', {}, parts);
    expect(problems(config)).toEqual(['notes.title: found ""; Too small: expected string to have >=1 characters']);
    // Had the config been read, only `other` would have run: the mistake is found before any role is selected.
    await expect(startRoles(roles, ['other'], { config: parseConfig({}, 'plant.json', {}, parts), file: 'plant.json', logger, env: {} })).rejects.toThrow('other does not start here');
  });

  it('a field declared by two owners stops the start naming both; one section as a whole and as fields too', () => {
    const twice = configPartsOf([role('notes', [], { 'notes-api': notesPart, 'notes-export': { section: 'notes', fields: { keepDays: z.number() } } })]);
    expect(() => parseConfig({}, 'plant.json', {}, twice)).toThrow(new ConfigPartError("config field 'notes.keepDays' is declared by plugins 'notes-api' and 'notes-export'"));
    const mixed = configPartsOf([role('notes', [{ section: 'notes', schema: z.array(z.string()).default([]) }], { 'notes-api': notesPart })]);
    expect(() => configSchema(mixed)).toThrow(new ConfigPartError("config field 'notes.keepDays' is declared by role 'notes' and plugin 'notes-api'"));
    // Two parts of one section with different fields merge.
    const merged = configPartsOf([role('notes', [{ section: 'notes', fields: { shared: z.boolean().default(false) } }], { 'notes-api': notesPart })]);
    expect(parseConfig({ notes: { shared: true } }, 'plant.json', {}, merged)).toMatchObject({ notes: { shared: true, keepDays: 30, title: 'Notes' } });
  });

  it('an optional section is undefined when absent; a check sees the whole config', () => {
    const part: ConfigPart = {
      section: 'notesLink',
      optional: true,
      fields: { url: z.string().min(1) },
      check: (config, ctx) => {
        if (config.notesLink && (config.roles as string[]).includes('notes')) ctx.addIssue({ code: 'custom', path: ['notesLink'], input: config.notesLink, message: 'notesLink is not for the notes role itself' });
      },
    };
    const parts = configPartsOf([role('notes', [part])]);
    expect(readPart(parseConfig({}, 'plant.json', {}, parts), part)).toBeUndefined();
    expect(readPart(parseConfig({ notesLink: { url: 'x' } }, 'plant.json', {}, parts), part)).toEqual({ url: 'x' });
    expect(problems(() => parseConfig({ notesLink: {} }, 'plant.json', {}, parts))).toEqual([expect.stringMatching(/^notesLink\.url: /)]);
    expect(problems(() => parseConfig({ roles: ['notes'], notesLink: { url: 'x' } }, 'plant.json', {}, parts))).toEqual(['notesLink: found {"url":"x"}; notesLink is not for the notes role itself']);
  });

  it('a plugin is given its settings and whether the file wrote each field; without a config, its defaults', async () => {
    const seen: unknown[] = [];
    const plugin = definePlugin<{ settings: string }, typeof notesPart.fields>({
      name: 'notes-api',
      config: notesPart,
      register(ctx) {
        // Typed from the part's fields, in place of the role context's own `settings` (npm run typecheck checks this).
        expectTypeOf(ctx.settings).toEqualTypeOf<{ keepDays: number; title: string }>();
        seen.push({ settings: ctx.settings, keepDays: ctx.configWrites('keepDays'), title: ctx.configWrites('title') });
      },
    });
    const parts = configPartsOf([role('notes', [], { 'notes-api': notesPart })]);
    const config = parseConfig({ notes: { keepDays: 9 } }, 'plant.json', {}, parts);
    await new PluginHost([plugin], logger, undefined, { config }).start({ settings: 'the role context' });
    await new PluginHost([plugin], logger).start({ settings: 'the role context' });
    expect(seen).toEqual([
      { settings: { keepDays: 9, title: 'Notes' }, keepDays: true, title: false },
      { settings: { keepDays: 30, title: 'Notes' }, keepDays: false, title: false },
    ]);
  });

  it("a plugin without a part keeps the role context's own settings", async () => {
    let settings: unknown;
    const plugin = definePlugin<{ settings: string }>({ name: 'plain', register: (ctx) => void (settings = ctx.settings) });
    await new PluginHost([plugin], logger, undefined, { config: parseConfig({}, '(inline)', {}, []) }).start({ settings: 'the role context' });
    expect(settings).toBe('the role context');
  });

  it("the runtime's keys are parts like any other: a plugin declaring one stops the start naming the runtime", () => {
    const parts = configPartsOf([role('notes', [], { 'notes-api': { section: 'communication', fields: { trustProxy: z.boolean() } } })]);
    expect(() => configSchema(parts)).toThrow(new ConfigPartError("config field 'communication.trustProxy' is declared by the runtime and plugin 'notes-api'"));
  });

  it('an old spelling is read as its new path with a notice, named as written in a mistake, and refused beside the new one', () => {
    const part: ConfigPart = { ...notesPart, aliases: { 'legacy.keep': 'notes.keepDays' } };
    const parts = configPartsOf([role('notes', [part])]);
    const config = parseConfig({ legacy: { keep: 7 } }, 'plant.json', {}, parts);
    expect(readPart(config, part)).toEqual({ keepDays: 7, title: 'Notes' });
    expect(configNotices(config)).toEqual(['config plant.json: legacy.keep is the old spelling of notes.keepDays, read as it; write notes.keepDays instead (the old spelling will stop being read)']);
    expect(configWrites(config, 'notes.keepDays')).toBe(true);
    // The old spelling is moved, not kept: the parsed config has the new path only.
    expect('legacy' in (config as object)).toBe(false);
    expect(configNotices(parseConfig({ notes: { keepDays: 9 } }, 'plant.json', {}, parts))).toEqual([]);
    expect(problems(() => parseConfig({ legacy: { keep: 0 } }, 'plant.json', {}, parts))).toEqual(['legacy.keep: found 0; Too small: expected number to be >=1']);
    expect(problems(() => parseConfig({ legacy: { keep: 7 }, notes: { keepDays: 8 } }, 'plant.json', {}, parts))).toEqual(['legacy.keep: notes.keepDays is given too; write only notes.keepDays (legacy.keep is its old spelling)']);
    // Other fields beside the old spelling stay where they are, and are checked there.
    expect(problems(() => parseConfig({ legacy: { keep: 7, colour: 'red' } }, 'plant.json', {}, parts))).toEqual(["(root): unknown field(s) 'legacy'; remove them"]);
  });

  it('an old spelling must lead to a path of its own part and must not be a path a part declares', () => {
    const astray = configPartsOf([role('notes', [{ ...notesPart, aliases: { 'legacy.keep': 'other.keepDays' } }])]);
    expect(() => configSchema(astray)).toThrow(new ConfigPartError("the old spelling 'legacy.keep' of role 'notes' leads to 'other.keepDays', which its part does not declare"));
    const taken = configPartsOf([role('notes', [{ ...notesPart, aliases: { 'communication.trustProxy': 'notes.title' } }])]);
    expect(() => configSchema(taken)).toThrow(new ConfigPartError("the old spelling 'communication.trustProxy' of role 'notes' is 'communication.trustProxy', declared by the runtime"));
  });

  it("a part's environment variables override its fields; a bad value names the variable; an unset or empty one overrides nothing", () => {
    const part: ConfigPart = {
      section: 'notes',
      fields: { port: z.number().int().default(1), shared: z.object({ on: z.boolean().default(false) }).prefault({}), title: z.string().default('Notes') },
      env: { NOTES_PORT: { field: 'port', type: 'port' }, NOTES_SHARED: { field: 'shared.on', type: 'boolean' }, NOTES_TITLE: { field: 'title', type: 'text' } },
    };
    const parts = configPartsOf([role('notes', [part])]);
    const env = { NOTES_PORT: '9000', NOTES_SHARED: '1', NOTES_TITLE: 'Plant notes' };
    const config = parseConfig({ notes: { port: 5 } }, 'plant.json', env, parts);
    expect(readPart(config, part)).toEqual({ port: 9000, shared: { on: true }, title: 'Plant notes' });
    expect(configWrites(config, 'notes.title')).toBe(false);
    expect(readPart(parseConfig({ notes: { port: 5 } }, 'plant.json', { NOTES_PORT: '' }, parts), part)).toMatchObject({ port: 5 });
    expect(problems(() => parseConfig({}, 'plant.json', { NOTES_PORT: '65536' }, parts))).toEqual(['NOTES_PORT (environment): found "65536"; expected an integer 0-65535']);
    expect(problems(() => parseConfig({}, 'plant.json', { NOTES_SHARED: 'yes' }, parts))).toEqual(['NOTES_SHARED (environment): found "yes"; expected true, false, 1 or 0']);
  });

  it('an environment variable must override a field of its own part, and is declared once', () => {
    const astray = configPartsOf([role('notes', [{ ...notesPart, env: { NOTES_X: { field: 'colour', type: 'text' } } }])]);
    expect(() => configSchema(astray)).toThrow(new ConfigPartError("environment variable NOTES_X of role 'notes' overrides 'notes.colour', which its part does not declare"));
    const twice = configPartsOf([role('notes', [{ ...notesPart, env: { GATEWAY_DATA_DIR: { field: 'title', type: 'text' } } }])]);
    expect(() => configSchema(twice)).toThrow(new ConfigPartError("environment variable GATEWAY_DATA_DIR is declared twice (the second by role 'notes')"));
  });

  it('a plugin reading fields of several sections is given them together, each written-or-not in its own section', async () => {
    const LINK_FIELDS = { linkUrl: z.string().default('') };
    const linkPart = { section: 'notesLink', fields: LINK_FIELDS } satisfies ConfigPart;
    let seen: unknown;
    const plugin = definePlugin<object, typeof notesPart.fields & typeof LINK_FIELDS>({
      name: 'notes-api',
      config: [notesPart, linkPart],
      register(ctx) {
        expectTypeOf(ctx.settings).toEqualTypeOf<{ keepDays: number; title: string; linkUrl: string }>();
        seen = { settings: ctx.settings, linkUrl: ctx.configWrites('linkUrl'), keepDays: ctx.configWrites('keepDays'), unknown: ctx.configWrites('colour') };
      },
    });
    const parts = configPartsOf([{ ...role('notes', []), plugins: [plugin as never] }]);
    expect(parts.map((p) => `${p.owner.kind} ${p.part.section}`).slice(-2)).toEqual(['plugin notes', 'plugin notesLink']);
    const config = parseConfig({ notesLink: { linkUrl: 'x' } }, 'plant.json', {}, parts);
    await new PluginHost([plugin], logger, undefined, { config }).start({});
    expect(seen).toEqual({ settings: { keepDays: 30, title: 'Notes', linkUrl: 'x' }, linkUrl: true, keepDays: false, unknown: false });
    const clash = definePlugin<object>({ name: 'clash', config: [notesPart, { section: 'other', fields: { title: z.string() } }], register: () => undefined });
    await expect(new PluginHost([clash], logger).start({})).rejects.toThrow(new PluginError("plugin 'clash' failed to start: config field 'title' is in sections 'notes' and 'other'; give the fields of its parts different names"));
  });
});
