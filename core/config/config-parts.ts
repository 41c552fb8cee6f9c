/**
 * Configuration parts: the runtime (config/schema.ts), a role's wing
 * (`RoleDefinition.config`) or a plugin (`config` of definePlugin) declares
 * the fields of the configuration it reads, as it declares its migrations.
 * The file is parsed once, by one schema assembled from every part of every
 * role compiled in (core/roles/index.ts, core/runtime/role.ts `configPartsOf`), so a
 * mistake anywhere stops the start with its path, whichever roles run.
 *
 * Assembly: the parts of one section merge into one strict object; a
 * section is optional when a part says so, otherwise absent means its
 * defaults. Two parts declaring the same field stop the start naming both.
 * Each part's `check` runs on the whole parsed config. A part may still
 * read old spellings of its fields (`aliases`) and let environment
 * variables override them (`env`); core/config/config.ts applies both before the
 * schema reads the file. A key no part declares is refused.
 */
import { z } from 'zod';

/** An environment variable that overrides a field of a part (GATEWAY_PORT → `communication.port`). */
export interface EnvOverride {
  /** The field inside the part's section, dotted for a nested one (`webhooks.allowPrivateNetworks`); none for a part that is a whole section. */
  field?: string;
  /** How the variable's text is read: a port (an integer 0-65535), a boolean (`true`, `false`, `1`, `0`) or text. An unset or empty variable overrides nothing. */
  type: 'port' | 'boolean' | 'text';
}

export interface ConfigPart<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The top-level key: 'mcp', 'history', 'cloud', … */
  section: string;
  /** The fields of that section this part reads; the parts of one section merge. */
  fields?: S;
  /** Or a whole section that is not an object of fields (e.g. a list, or a top-level value such as `dataDir`). */
  schema?: z.ZodType;
  /** The section may be absent; the settings are then undefined. Otherwise an absent section is its fields' defaults. */
  optional?: boolean;
  /**
   * Old spellings still read: an old dotted path from the root → the path
   * of this part it is now (`{ 'gateway.dataDir': 'dataDir' }`). A file
   * that uses one gets a deprecation line (configNotices), and a mistake in
   * its value is named by the old path, as the file writes it.
   */
  aliases?: Readonly<Record<string, string>>;
  /** Environment variables that override this part's fields, by variable name (`{ GATEWAY_PORT: { field: 'port', type: 'port' } }`). */
  env?: Readonly<Record<string, EnvOverride>>;
  /** Rules across sections, run on the whole parsed config; report with `ctx.addIssue({ code: 'custom', path, input, message })` (`input`: the value at `path`, which the message shows as found). */
  check?(config: Record<string, unknown>, ctx: z.RefinementCtx): void;
}

/** Who declares a part: a role's wing or a plugin. */
export interface ConfigPartOwner {
  kind: 'runtime' | 'role' | 'plugin';
  name: string;
}

/** The owner of the runtime's own parts (config/schema.ts). */
export const RUNTIME_OWNER: ConfigPartOwner = { kind: 'runtime', name: 'runtime' };

export interface OwnedConfigPart {
  owner: ConfigPartOwner;
  part: ConfigPart;
}

/** What a part's owner reads: its fields as parsed (defaults applied). */
export type PartSettings<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/** An old spelling a part still reads: the old path and the new one, dotted from the root. */
export interface ConfigAlias {
  from: string;
  to: string;
}

/** An environment variable overriding the value at `path` (dotted from the root). */
export interface ConfigOverride {
  variable: string;
  path: string;
  type: EnvOverride['type'];
}

/** What the parts make of the configuration: its schema, the old spellings still read, the environment overrides. */
export interface AssembledConfig {
  /** The parsed file, a key per section: what the runtime's own sections hold is typed by their reader (GatewayConfig, config/schema.ts). */
  schema: z.ZodType<Record<string, unknown>>;
  aliases: readonly ConfigAlias[];
  overrides: readonly ConfigOverride[];
}

/** A part that cannot be assembled (a field declared twice, fields and a whole schema for one section): a mistake of the build, not of the config file. */
export class ConfigPartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigPartError';
  }
}

/** `role 'cloud'`, `plugin 'mcp'`, or `the runtime`. */
export function ownerName(owner: ConfigPartOwner): string {
  return owner.kind === 'runtime' ? 'the runtime' : `${owner.kind} '${owner.name}'`;
}

/** `plugins 'mcp' and 'x'`, or `role 'cloud' and plugin 'x'`. */
function bothOwners(a: ConfigPartOwner, b: ConfigPartOwner): string {
  return a.kind === b.kind && a.kind !== 'runtime' ? `${a.kind}s '${a.name}' and '${b.name}'` : `${ownerName(a)} and ${ownerName(b)}`;
}

/** Every path a part declares: `section.field` for fields, `section` for a whole section. */
function declaredPaths({ owner, part }: OwnedConfigPart): string[] {
  if (part.schema && part.fields) throw new ConfigPartError(`the config part of ${ownerName(owner)} for section '${part.section}' gives both fields and a whole schema; give one`);
  if (!part.schema && !part.fields) throw new ConfigPartError(`the config part of ${ownerName(owner)} for section '${part.section}' gives neither fields nor a schema`);
  return part.schema ? [part.section] : Object.keys(part.fields ?? {}).map((f) => `${part.section}.${f}`);
}

/** `path` is `declared` or lies inside it. */
const within = (path: string, declared: string) => path === declared || path.startsWith(`${declared}.`);

/** Refuses a field (or section) declared by two parts, naming both owners; returns who declares each path. */
function checkDeclaredOnce(parts: readonly OwnedConfigPart[]): Map<string, ConfigPartOwner> {
  const owners = new Map<string, ConfigPartOwner>();
  for (const owned of parts) {
    for (const path of declaredPaths(owned)) {
      const section = path.split('.')[0] as string;
      const clash = owners.get(path) ?? (path === section ? [...owners].find(([p]) => p.startsWith(`${section}.`))?.[1] : owners.get(section));
      if (clash) throw new ConfigPartError(`config ${path === section ? 'section' : 'field'} '${path}' is declared by ${bothOwners(clash, owned.owner)}`);
      owners.set(path, owned.owner);
    }
  }
  return owners;
}

/** The old spellings of every part: each must lead to a path its part declares, and must not be a path any part declares. */
function aliasesOf(parts: readonly OwnedConfigPart[], declared: ReadonlyMap<string, ConfigPartOwner>): ConfigAlias[] {
  const aliases: ConfigAlias[] = [];
  for (const owned of parts) {
    const own = declaredPaths(owned);
    for (const [from, to] of Object.entries(owned.part.aliases ?? {})) {
      const where = `the old spelling '${from}' of ${ownerName(owned.owner)}`;
      if (!own.some((path) => within(to, path))) throw new ConfigPartError(`${where} leads to '${to}', which its part does not declare`);
      const taken = [...declared.keys()].find((path) => within(from, path) || within(path, from));
      if (taken) throw new ConfigPartError(`${where} is '${taken}', declared by ${ownerName(declared.get(taken) as ConfigPartOwner)}`);
      if (aliases.some((a) => a.from === from)) throw new ConfigPartError(`${where} is given by another part too`);
      aliases.push({ from, to });
    }
  }
  return aliases;
}

/** The environment overrides of every part. A variable named twice is refused. */
function overridesOf(parts: readonly OwnedConfigPart[]): ConfigOverride[] {
  const overrides: ConfigOverride[] = [];
  const add = (override: ConfigOverride, by: string) => {
    if (overrides.some((o) => o.variable === override.variable)) throw new ConfigPartError(`environment variable ${override.variable} is declared twice (the second by ${by})`);
    overrides.push(override);
  };
  for (const { owner, part } of parts) {
    for (const [variable, { field, type }] of Object.entries(part.env ?? {})) {
      const path = field ? `${part.section}.${field}` : part.section;
      if (!declaredPaths({ owner, part }).some((own) => within(path, own))) throw new ConfigPartError(`environment variable ${variable} of ${ownerName(owner)} overrides '${path}', which its part does not declare`);
      add({ variable, path, type }, ownerName(owner));
    }
  }
  return overrides;
}

/** One section's schema from the parts that declare it. */
function sectionSchema(parts: readonly ConfigPart[]): z.ZodType {
  const whole = parts.find((p) => p.schema);
  if (whole?.schema) return whole.optional ? whole.schema.optional() : whole.schema;
  const object = z.object(Object.assign({}, ...parts.map((p) => p.fields))).strict();
  return parts.some((p) => p.optional) ? object.optional() : object.prefault({});
}

const assembled = new WeakMap<readonly OwnedConfigPart[], AssembledConfig>();

/**
 * What the parts make of the configuration: the schema of the whole file
 * (every part's section; with no part, no key), the
 * old spellings still read, and the environment overrides. Computed once
 * per list of parts; a part that cannot be assembled is a ConfigPartError.
 */
export function assembleConfig(parts: readonly OwnedConfigPart[]): AssembledConfig {
  const known = assembled.get(parts);
  if (known) return known;
  const declared = checkDeclaredOnce(parts);
  const sections: Record<string, z.ZodType> = {};
  for (const section of new Set(parts.map((p) => p.part.section))) {
    sections[section] = sectionSchema(parts.filter((p) => p.part.section === section).map((p) => p.part));
  }
  const checks = parts.flatMap(({ part }) => (part.check ? [part.check] : []));
  const object = z.object(sections).strict();
  const schema = (checks.length ? object.superRefine((config, ctx) => checks.forEach((check) => check(config, ctx))) : object) as unknown as z.ZodType<Record<string, unknown>>;
  const result = { schema, aliases: aliasesOf(parts, declared), overrides: overridesOf(parts) };
  assembled.set(parts, result);
  return result;
}

/** The schema of the whole configuration: every part's section (assembleConfig). */
export function configSchema(parts: readonly OwnedConfigPart[]): z.ZodType<Record<string, unknown>> {
  return assembleConfig(parts).schema;
}

/** A part that is a whole section (`schema`), as readPart reads it. */
type WholePart<T extends z.ZodType> = ConfigPart & { schema: T };

/**
 * The settings of a part in a config parsed with it: its fields, or its
 * whole section; undefined for an optional section that is absent. Without
 * a config (a role started by a test without one) they are the part's
 * defaults.
 */
export function readPart<T extends z.ZodType>(config: object | undefined, part: WholePart<T>): z.output<T>;
export function readPart<S extends z.ZodRawShape>(config: object | undefined, part: ConfigPart<S> & { optional: true }): PartSettings<S> | undefined;
export function readPart<S extends z.ZodRawShape>(config: object | undefined, part: ConfigPart<S>): PartSettings<S>;
export function readPart(config: object | undefined, part: ConfigPart): unknown {
  let value = config ? (config as Record<string, unknown>)[part.section] : undefined;
  if (value === undefined) {
    if (part.optional) return undefined;
    value = sectionSchema([part]).parse(undefined);
  }
  if (part.schema || value === null || typeof value !== 'object') return value;
  const section = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(part.fields ?? {}).map((f) => [f, section[f]]));
}
