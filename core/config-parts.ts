/**
 * Configuration parts: a plugin (`config` of definePlugin) or a role's wing
 * (`RoleDefinition.config`) declares the fields of the configuration it
 * reads, as it declares its migrations. The file is still parsed once, by
 * one schema assembled from config/schema.ts (the base) and every part of
 * every role compiled in (core/roles/index.ts), so a mistake anywhere stops
 * the start with its path, whichever roles run.
 *
 * Assembly: the parts of one section merge into one strict object, over the
 * base section's fields (a part's field replaces the base field of the same
 * path, so a section moves from the base to its owner field by field); a
 * section is optional when a part says so, otherwise absent means its
 * defaults. Two parts declaring the same field stop the start naming both.
 * Each part's `check` runs on the whole parsed config.
 */
import { z } from 'zod';
import { baseConfigObject, checkFleetEntries, gatewayConfigSchema, type GatewayConfig } from '../config/schema.js';

export interface ConfigPart<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The top-level key: 'mcp', 'history', 'cloud', … */
  section: string;
  /** The fields of that section this part reads; the parts of one section merge. */
  fields?: S;
  /** Or a whole section that is not an object of fields (e.g. a list). */
  schema?: z.ZodType;
  /** The section may be absent; the settings are then undefined. Otherwise an absent section is its fields' defaults. */
  optional?: boolean;
  /** Rules across sections, run on the whole parsed config; report with `ctx.addIssue({ code: 'custom', path, input, message })` (`input`: the value at `path`, which the message shows as found). */
  check?(config: Record<string, unknown>, ctx: z.RefinementCtx): void;
}

/** Who declares a part: a role's wing or a plugin. */
export interface ConfigPartOwner {
  kind: 'role' | 'plugin';
  name: string;
}

export interface OwnedConfigPart {
  owner: ConfigPartOwner;
  part: ConfigPart;
}

/** What a part's owner reads: its fields as parsed (defaults applied). */
export type PartSettings<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/** A part that cannot be assembled (a field declared twice, fields and a whole schema for one section): a mistake of the build, not of the config file. */
export class ConfigPartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigPartError';
  }
}

/** `plugins 'mcp' and 'x'`, or `role 'cloud' and plugin 'x'`. */
function bothOwners(a: ConfigPartOwner, b: ConfigPartOwner): string {
  return a.kind === b.kind ? `${a.kind}s '${a.name}' and '${b.name}'` : `${a.kind} '${a.name}' and ${b.kind} '${b.name}'`;
}

/** The object of fields inside a section's schema (through its default or optional), if it is one. */
function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  if (schema instanceof z.ZodObject) return schema;
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional || schema instanceof z.ZodPrefault) return objectOf(schema.unwrap() as z.ZodType);
  return undefined;
}

/** Every path a part declares: `section.field` for fields, `section` for a whole section. */
function declaredPaths({ owner, part }: OwnedConfigPart): string[] {
  if (part.schema && part.fields) throw new ConfigPartError(`the config part of ${owner.kind} '${owner.name}' for section '${part.section}' gives both fields and a whole schema; give one`);
  if (!part.schema && !part.fields) throw new ConfigPartError(`the config part of ${owner.kind} '${owner.name}' for section '${part.section}' gives neither fields nor a schema`);
  return part.schema ? [part.section] : Object.keys(part.fields ?? {}).map((f) => `${part.section}.${f}`);
}

/** Refuses a field (or section) declared by two parts, naming both owners. */
function checkDeclaredOnce(parts: readonly OwnedConfigPart[]): void {
  const owners = new Map<string, ConfigPartOwner>();
  for (const owned of parts) {
    for (const path of declaredPaths(owned)) {
      const section = path.split('.')[0] as string;
      const clash = owners.get(path) ?? (path === section ? [...owners].find(([p]) => p.startsWith(`${section}.`))?.[1] : owners.get(section));
      if (clash) throw new ConfigPartError(`config ${path === section ? 'section' : 'field'} '${path}' is declared by ${bothOwners(clash, owned.owner)}`);
      owners.set(path, owned.owner);
    }
  }
}

/** One section's schema from the parts that declare it, over the base section. */
function sectionSchema(section: string, parts: readonly ConfigPart[]): z.ZodType {
  const whole = parts.find((p) => p.schema);
  if (whole?.schema) return whole.optional ? whole.schema.optional() : whole.schema;
  const base = (baseConfigObject.shape as Record<string, z.ZodType>)[section];
  const baseObject = base ? objectOf(base) : undefined;
  if (base && !baseObject) throw new ConfigPartError(`config section '${section}' is not an object of fields; a part can only replace it whole (schema)`);
  const object = z.object({ ...baseObject?.shape, ...Object.assign({}, ...parts.map((p) => p.fields)) }).strict();
  const optional = parts.some((p) => p.optional) || base instanceof z.ZodOptional;
  return optional ? object.optional() : object.prefault({});
}

const assembled = new WeakMap<readonly OwnedConfigPart[], z.ZodType<GatewayConfig>>();

/**
 * The schema of the whole configuration: the base with every part. With no
 * part it is the base schema itself (config/schema.ts). Computed once per
 * list of parts.
 */
export function configSchema(parts: readonly OwnedConfigPart[]): z.ZodType<GatewayConfig> {
  if (parts.length === 0) return gatewayConfigSchema;
  const known = assembled.get(parts);
  if (known) return known;
  checkDeclaredOnce(parts);
  const sections: Record<string, z.ZodType> = { ...baseConfigObject.shape };
  for (const section of new Set(parts.map((p) => p.part.section))) {
    sections[section] = sectionSchema(section, parts.filter((p) => p.part.section === section).map((p) => p.part));
  }
  const schema = z
    .object(sections)
    .strict()
    .superRefine((config, ctx) => {
      checkFleetEntries(config as GatewayConfig, ctx);
      for (const { part } of parts) part.check?.(config, ctx);
    }) as unknown as z.ZodType<GatewayConfig>;
  assembled.set(parts, schema);
  return schema;
}

/**
 * The settings of a part in a config parsed with it: its fields, or its
 * whole section; undefined for an optional section that is absent. Without
 * a config (a role started by a test without one) they are the part's
 * defaults.
 */
export function readPart<S extends z.ZodRawShape>(config: object | undefined, part: ConfigPart<S>): PartSettings<S> | undefined {
  let value = config ? (config as Record<string, unknown>)[part.section] : undefined;
  if (value === undefined) {
    if (part.optional) return undefined;
    value = sectionSchema(part.section, [part as ConfigPart]).parse(undefined);
  }
  if (part.schema || value === null || typeof value !== 'object') return value as PartSettings<S>;
  const section = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(part.fields ?? {}).map((f) => [f, section[f]])) as PartSettings<S>;
}
