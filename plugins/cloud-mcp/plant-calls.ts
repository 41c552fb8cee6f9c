/**
 * One agent across plants: the tool calls of an OAuth caller, who may see
 * several gateways (plugins/cloud-mcp/mcp-auth.ts). Every gateway tool takes
 * an optional `gateway` argument, required when more than one gateway is
 * visible, except `get_fleet_status` and `list_machines`, which without it
 * ask every visible gateway at once and merge the answers with a
 * per-gateway `gateways: [{name, ok, error}]` part (an unreachable gateway is
 * reported, not a failure of the call); `list_gateways` lists what the
 * caller may see. Errors name the gateways the caller may use.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { joinedLiteral, textLiteral } from '../../core/cloud-wire/protocol.js';
import { quote } from '../../core/interfaces/errors.js';
import type { ToolCatalogue } from '../../core/mcp/dispatch.js';
import type { GatewayTokens } from '../../core/roles/cloud/tokens.js';
import type { McpCaller } from './mcp-auth.js';
import type { RelayedCall, ToolAnswer } from './relayed-call.js';

/** The tools that fan out to every visible gateway when no `gateway` is named. */
export const FLEET_TOOLS: ReadonlySet<string> = new Set(['get_fleet_status', 'list_machines']);

const LIST_GATEWAYS: Tool = {
  name: 'list_gateways',
  title: 'List gateways',
  description: 'The gateways (plants) this identity may see: name, alias (from the gateway\'s own settings; null when offline or unset there), online, machineCount (null when offline). Pass a name as the `gateway` argument of the other tools.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { title: 'List gateways', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
};

/** A gateway the caller may see: its name and the id of its current token (the relay's address). */
export interface VisibleGateway {
  name: string;
  id: string;
}

export interface PlantCallOptions {
  tokens: GatewayTokens;
  catalogue: ToolCatalogue;
  relayed: RelayedCall;
  isOnline(id: string): boolean;
}

const own = (text: string, isError = false): ToolAnswer => (isError ? { text, isError: true } : { parts: textLiteral(text), size: Buffer.byteLength(JSON.stringify(text)), isError: false, ifMalformed: text });

/** The gateway's answer as a value (its JSON text parsed), or why there is none. */
function answerValue(answer: ToolAnswer): { ok: true; value: unknown } | { ok: false; error: string } {
  if ('text' in answer) return { ok: false, error: answer.text.slice(0, 1000) };
  const literal = joinedLiteral(answer);
  if (!literal) return { ok: false, error: answer.ifMalformed };
  const text = JSON.parse(literal.toString('utf8')) as string;
  if (answer.isError) return { ok: false, error: text.slice(0, 1000) };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, error: 'the gateway answered text that is not JSON' };
  }
}

/** The tool calls and list of one OAuth caller. */
export class PlantCalls {
  constructor(private readonly o: PlantCallOptions) {}

  /** The gateways `caller` may see, by name, each at its current (not revoked) token. */
  async visible(caller: Extract<McpCaller, { kind: 'oauth' }>): Promise<VisibleGateway[]> {
    const current = new Map<string, { id: string; createdAt: number }>();
    for (const t of await this.o.tokens.list()) {
      if (t.revokedAt !== null) continue;
      const seen = current.get(t.name);
      if (!seen || t.createdAt > seen.createdAt) current.set(t.name, { id: t.id, createdAt: t.createdAt });
    }
    const names = caller.gateways === '*' ? [...current.keys()] : caller.gateways.filter((n) => current.has(n));
    return names.sort().map((name) => ({ name, id: (current.get(name) as { id: string }).id }));
  }

  /** The tools as this caller sees them: each gateway tool with its optional `gateway` argument, and list_gateways. */
  list(visible: readonly VisibleGateway[]): Tool[] {
    const names = visible.map((g) => g.name);
    const gateway = { type: 'string', enum: names, description: 'The gateway (plant) to ask; from list_gateways. Needed when more than one is visible, except for get_fleet_status and list_machines, which then ask every gateway.' };
    const tools = this.o.catalogue.list().map((t) => ({ ...t, inputSchema: { ...t.inputSchema, properties: { ...(t.inputSchema.properties ?? {}), gateway } } }));
    return [LIST_GATEWAYS, ...tools];
  }

  /** One tool call of `caller`. */
  async call(caller: Extract<McpCaller, { kind: 'oauth' }>, name: string, args: Record<string, unknown> | undefined, correlation: string | string[] | undefined): Promise<ToolAnswer> {
    const visible = await this.visible(caller);
    const may = visible.length ? visible.map((g) => g.name).join(', ') : 'none (this identity is mapped to no gateway; ask an administrator to map its claims in cloud.mcpAuth.gateways)';
    if (name === 'list_gateways') return this.listGateways(visible, correlation);
    const { gateway, ...rest } = args ?? {};
    const forward = args === undefined ? undefined : rest;
    if (gateway !== undefined) {
      const target = typeof gateway === 'string' ? visible.find((g) => g.name === gateway) : undefined;
      if (!target) return own(`Unknown gateway ${quote(typeof gateway === 'string' ? gateway : JSON.stringify(gateway))}; accepted: ${may}`, true);
      return this.o.relayed(target.id, name, forward, correlation);
    }
    if (visible.length === 1) return this.o.relayed((visible[0] as VisibleGateway).id, name, forward, correlation);
    if (FLEET_TOOLS.has(name) && visible.length > 1) return this.fanOut(visible, name, forward ?? {}, correlation);
    return own(`${name} needs the gateway argument: this identity sees ${visible.length === 0 ? 'no gateway' : 'several gateways'}; accepted: ${may}`, true);
  }

  /** Every visible gateway asked at once, the answers merged with a part per gateway. */
  private async fanOut(visible: readonly VisibleGateway[], name: string, args: Record<string, unknown>, correlation: string | string[] | undefined): Promise<ToolAnswer> {
    const answers = await Promise.all(visible.map(async (g) => ({ g, result: answerValue(await this.o.relayed(g.id, name, args, correlation)) })));
    const gateways = answers.map(({ g, result }) => (result.ok ? { name: g.name, ok: true } : { name: g.name, ok: false, error: result.error }));
    if (name === 'list_machines') {
      const machines = answers.flatMap(({ g, result }) => (result.ok ? ((result.value as { machines?: Record<string, unknown>[] }).machines ?? []).map((m) => ({ gateway: g.name, ...m })) : []));
      return own(JSON.stringify({ gateways, count: machines.length, machines }));
    }
    const byGateway = Object.fromEntries(answers.filter(({ result }) => result.ok).map(({ g, result }) => [g.name, (result as { value: unknown }).value]));
    return own(JSON.stringify({ gateways, byGateway }));
  }

  private async listGateways(visible: readonly VisibleGateway[], correlation: string | string[] | undefined): Promise<ToolAnswer> {
    const rows = await Promise.all(
      visible.map(async (g) => {
        const online = this.o.isOnline(g.id);
        let machineCount: number | null = null;
        let alias: string | null = null;
        if (online) {
          // Both asked at once: the machines' count, and the alias the gateway's own settings give it.
          const [machines, system] = await Promise.all([
            this.o.relayed(g.id, 'list_machines', {}, correlation).then(answerValue),
            this.o.relayed(g.id, 'get_system_info', {}, correlation).then(answerValue),
          ]);
          if (machines.ok) machineCount = Number((machines.value as { count?: unknown }).count ?? 0);
          const named = system.ok ? (system.value as { gateway?: { alias?: unknown } }).gateway?.alias : undefined;
          if (typeof named === 'string' && named !== '') alias = named.slice(0, 256);
        }
        return { name: g.name, alias, online, machineCount };
      }),
    );
    return own(JSON.stringify({ count: rows.length, gateways: rows }));
  }
}
