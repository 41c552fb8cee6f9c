/**
 * JSON Schema helpers both HTTP surfaces use (the gateway's /api document in
 * core/roles/gateway/openapi.ts, the REST kit's /openapi/v1.json in
 * core/rest/openapi.ts, and the MCP tool registry's input schemas): zod to
 * JSON Schema 2020-12, and the hoisting of a converted schema's `$defs` into
 * an OpenAPI document's components.
 */
import { z } from 'zod';

/** A JSON Schema 2020-12 object, as OpenAPI 3.1 embeds it. */
export type JsonSchema = { [keyword: string]: unknown };

export type OpenApiInfo = { title: string; version: string; description: string };

/** Converts a zod schema to JSON Schema 2020-12; transforms and preprocessors show what the caller sends (`input`). */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // `unrepresentable: 'any'`: a date, a custom check or a function becomes `{}` instead of throwing.
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

export function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Replaces every `$ref` in a schema tree with `rewrite($ref)`. */
export function rewriteRefs(node: unknown, rewrite: (ref: string) => string): void {
  if (Array.isArray(node)) {
    for (const item of node) rewriteRefs(item, rewrite);
  } else if (isSchema(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') node.$ref = rewrite(value);
      else rewriteRefs(value, rewrite);
    }
  }
}

/**
 * Moves a converted schema's `$defs` into components.schemas. Inside an
 * OpenAPI document `#/$defs/X` would resolve against the document root, not
 * the schema, so every local reference is rewritten to its component.
 */
export function hoistDefinitions(json: JsonSchema, owner: string, schemas: Record<string, JsonSchema>): JsonSchema {
  const defs = isSchema(json.$defs) ? json.$defs : {};
  delete json.$defs;
  const names = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    const plain = name.replace(/[^A-Za-z0-9._-]/g, '_');
    // A named schema (zod `.meta({ id })`) shared by several interfaces stays one component.
    const sameAsExisting = !plain.startsWith('__') && JSON.stringify(schemas[plain]) === JSON.stringify(def);
    const component = sameAsExisting || (!plain.startsWith('__') && !(plain in schemas)) ? plain : `${owner}.${plain}`;
    names.set(name, component);
  }
  let root = json;
  const refersToRoot = JSON.stringify(json).includes('"$ref":"#"');
  const rewrite = (ref: string): string => {
    if (ref === '#') return `#/components/schemas/${owner}`;
    const match = /^#\/\$defs\/([^/]+)(.*)$/.exec(ref);
    const component = match && names.get(decodeURIComponent(match[1] ?? ''));
    return component ? `#/components/schemas/${component}${match?.[2] ?? ''}` : ref;
  };
  for (const [name, def] of Object.entries(defs)) {
    if (!isSchema(def)) continue;
    rewriteRefs(def, rewrite);
    schemas[names.get(name) as string] = def;
  }
  rewriteRefs(json, rewrite);
  // A recursive top-level schema refers to itself as `#`: it becomes a component too.
  if (refersToRoot) {
    schemas[owner] = json;
    root = { $ref: `#/components/schemas/${owner}` };
  }
  return root;
}
