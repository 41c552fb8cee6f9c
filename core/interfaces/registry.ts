/**
 * The interface registry. An interface is a named operation of a contract:
 * its entry (`InterfaceEntry`: path, method, input and output schemas, the
 * errors it answers, summary and permission) is declared once where every
 * caller can import it (the gateway's: core/roles/gateway/contract/), and a
 * plugin implements it (`implement(entry, { handler })`). HTTP routes are
 * generated from the registry, and composite callers (the MCP tools, the
 * program service's in-process link) call an entry (`call(entry, …)`) through
 * the same pipeline: authorise → validate → run → map errors.
 *
 * Outputs. The input is always parsed; the output is not checked at run
 * time. Its type is checked when the code is compiled: `implement()`
 * requires the handler to return the entry's output type, and `call()`
 * returns it. The output schema is what the OpenAPI document shows; under
 * the test suite (`checkOutputs`, turned on by the suite's setup file) every
 * answer is checked against it, and a mismatch fails the test that caused it.
 */
import { z } from 'zod';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError, type ErrorName } from './errors.js';
import { describeIssues, parseOrThrow } from './schema-errors.js';
import { inInterfaceSpan } from '../telemetry/calls.js';
import { tracingEnabled } from '../telemetry/tracing.js';

/** Who is calling. */
export interface Principal {
  username: string | null;
  isAdmin: boolean;
  /** How the caller authenticated. `none` when security control is off or not yet enforced; `oauth` an identity provider's access token on /mcp. */
  method: 'none' | 'jwt' | 'secretKey' | 'internal' | 'oauth';
  /** The machine groups (groupIDs) whose machines the caller may see; absent: every machine. */
  machineGroups?: readonly string[];
}

/** The body limit of an interface that does not set its own: ample for any ID, settings or config input. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

export const ANONYMOUS: Principal = Object.freeze({ username: null, isAdmin: false, method: 'none' as const });

export interface CallContext {
  principal: Principal;
  sourceIp?: string;
  /** The id a relayed call carries end to end (cloud → broker → gateway): in the log lines and the error log. */
  correlationId?: string;
  logger: Logger;
}

/**
 * One interface as its callers know it: everything but its implementation.
 * `I` and `O` are the input and output schemas, so a caller's input and the
 * answer it reads are typed by the entry itself.
 */
export interface InterfaceEntry<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** Unique path under /api, also the default permission key. */
  path: `/api/${string}`;
  method: 'GET' | 'POST';
  summary: string;
  tags?: readonly string[];
  input: I;
  /** What the answer's data is: shown in the OpenAPI document, and checked under the test suite (see the file header). */
  output: O;
  /** The errors of the table (core/interfaces/errors.ts) this interface answers besides those any interface may (authentication, permission, validation, limits). */
  errors: readonly ErrorName[];
  /** Permission key; defaults to the path. `null` marks a public interface that needs no credentials. */
  permission?: string | null;
  /**
   * Fields of the data that HTTP also sends at the top level of the body, beside
   * errorCode and errorMsg, where the specification names them there (login's `token`).
   */
  topLevel?: readonly string[];
}

/** Declares an entry, keeping its schemas' types and its path as a literal type (so a typed client's path is checked against it). */
export function defineEntry<P extends `/api/${string}`, I extends z.ZodType, O extends z.ZodType>(entry: InterfaceEntry<I, O> & { path: P }): InterfaceEntry<I, O> & { path: P } {
  return entry;
}

/** The data an entry's interface answers. */
export type EntryOutput<E extends InterfaceEntry> = z.output<E['output']>;
/** The input a caller gives an entry's interface (before parsing: query strings and JSON alike). */
export type EntryInput<E extends InterfaceEntry> = z.input<E['input']>;

/** How an interface is carried out: what only its implementing plugin knows. */
export interface InterfaceImplementation<I extends z.ZodType, O extends z.ZodType> {
  handler(input: z.output<I>, ctx: CallContext): Promise<z.output<O>> | z.output<O>;
  /**
   * Largest request body, in bytes, that HTTP reads for this interface
   * (POST only); a larger one is refused with 413 while it streams in, before
   * it is buffered. Defaults to DEFAULT_BODY_LIMIT.
   */
  bodyLimit?: number;
}

/** A registered interface: its entry and its implementation, as HTTP and the OpenAPI document read it. */
export interface InterfaceDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> extends InterfaceEntry<I, O>, InterfaceImplementation<I, O> {}

/** Request facts an authenticator may use. */
export interface RequestInfo {
  headers: Record<string, string | string[] | undefined>;
  sourceIp: string;
  path: string;
}

/**
 * The access seam. The default lets everyone in as an anonymous caller; the
 * auth plugin replaces it with JWT/secret-key authentication, security
 * control, authorised-API lists and the IP white list.
 */
export interface AccessPolicy {
  /** Resolves the caller of an HTTP request, or throws a GatewayError (401, errorCode 3 or 7). */
  authenticate(request: RequestInfo, def: InterfaceDefinition | undefined): Promise<Principal> | Principal;
  /** Throws GatewayError('FORBIDDEN') when `principal` may not call `def`. */
  authorize(principal: Principal, def: InterfaceDefinition): void;
  /**
   * The principal of an existing user, for calls made on a user's behalf by
   * the gateway itself (the cloud link runs cloud calls as a chosen user);
   * undefined when there is no such user.
   */
  principalFor(username: string): Principal | undefined;
}

export const OPEN_POLICY: AccessPolicy = {
  authenticate: () => ANONYMOUS,
  authorize: () => undefined,
  principalFor: (username) => ({ username, isAdmin: true, method: 'internal' }),
};

export type CallResult<O = unknown> = { ok: true; data: O } | { ok: false; error: GatewayError };

/** Listener told about every failed call, e.g. the error log. */
export type CallErrorListener = (event: { path: string; error: GatewayError; ctx: CallContext; at: number }) => void;

export class InterfaceRegistry {
  private readonly defs = new Map<string, InterfaceDefinition>();
  private policy: AccessPolicy = OPEN_POLICY;
  private readonly errorListeners: CallErrorListener[] = [];

  /** Under the test suite: check every answer against its interface's output schema (the file header). Off in production. */
  static checkOutputs = false;
  /** Answers that did not match their output schema while `checkOutputs` was on, as `path: problems` lines; the suite's setup file empties it after each test. */
  static readonly outputMismatches: string[] = [];

  constructor(private readonly logger: Logger) {}

  /** Registers the implementation of `entry`; its handler must answer the entry's output type. A path is implemented once. */
  implement<I extends z.ZodType, O extends z.ZodType>(entry: InterfaceEntry<I, O>, implementation: InterfaceImplementation<I, O>): void {
    if (!entry.path.startsWith('/api/')) throw new Error(`interface path must start with /api/: ${entry.path}`);
    if (this.defs.has(entry.path)) throw new Error(`interface ${entry.path} is defined twice`);
    this.defs.set(entry.path, { ...entry, ...implementation } as unknown as InterfaceDefinition);
  }

  get(path: string): InterfaceDefinition | undefined {
    return this.defs.get(path);
  }

  list(): InterfaceDefinition[] {
    return [...this.defs.values()];
  }

  setAccessPolicy(policy: AccessPolicy): void {
    this.policy = policy;
  }

  get accessPolicy(): AccessPolicy {
    return this.policy;
  }

  onError(listener: CallErrorListener): void {
    this.errorListeners.push(listener);
  }

  /** Runs the interface of `entry` for an already-authenticated principal. Never throws; the data has the entry's output type. */
  call<E extends InterfaceEntry>(entry: E, input: EntryInput<E>, ctx: CallerContext): Promise<CallResult<EntryOutput<E>>>;
  call(entry: InterfaceEntry, input: unknown, ctx: CallerContext): Promise<CallResult> {
    if (!tracingEnabled()) return this.callUntraced(entry, input, ctx);
    return inInterfaceSpan(entry.path, input, async (note) => {
      const result = await this.callUntraced(entry, input, ctx);
      note.set({ 'cncgw.outcome': result.ok ? 'ok' : 'error', 'cncgw.error.code': result.ok ? undefined : result.error.errorName });
      if (!result.ok) note.fail(result.error.errorName);
      return result;
    });
  }

  private async callUntraced(entry: InterfaceEntry, input: unknown, ctx: CallerContext): Promise<CallResult> {
    const { path } = entry;
    const logger = ctx.logger ?? this.logger;
    const full: CallContext = { ...ctx, logger: ctx.correlationId !== undefined && ctx.logger === undefined ? logger.child({ correlationId: ctx.correlationId }) : logger };
    const def = this.defs.get(path);
    try {
      if (!def) throw new GatewayError('NOT_FOUND', `no interface at ${path}`);
      if (def.permission !== null) this.policy.authorize(full.principal, def);
      const parsed = parseOrThrow(def.input, input ?? {});
      const data = await def.handler(parsed, full);
      if (InterfaceRegistry.checkOutputs) checkOutput(path, def.output, data);
      return { ok: true, data };
    } catch (err) {
      const error = toGatewayError(err);
      if (error.errorName === 'UNKNOWN_ERROR') full.logger.error({ err, path }, 'interface failed unexpectedly');
      this.reportError(path, error, full);
      return { ok: false, error };
    }
  }

  /** Tells the error listeners about a failure that happened before `call` (e.g. authentication). */
  reportError(path: string, error: GatewayError, ctx: CallContext): void {
    const event = { path, error, ctx, at: Date.now() };
    for (const listener of this.errorListeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error({ err }, 'error listener failed');
      }
    }
  }
}

/** The context `call()` takes: a CallContext whose logger defaults to the registry's. */
type CallerContext = Omit<CallContext, 'logger'> & { logger?: Logger };

/** Notes an answer that does not match its output schema (only while `checkOutputs` is on). */
function checkOutput(path: string, output: z.ZodType, data: unknown): void {
  const checked = output.safeParse(data, { reportInput: true });
  if (!checked.success) InterfaceRegistry.outputMismatches.push(`${path}: ${describeIssues(checked.error.issues, data).join('; ')}`);
}

// Helpers for GET interfaces, whose inputs arrive as query strings.

/** An integer from a query string or JSON number. */
export const queryInt = () => z.coerce.number().int();

/** A boolean from `true`/`false`/`1`/`0` or a JSON boolean. */
export const queryBool = () =>
  z.preprocess((v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v), z.boolean());

/** A list from a comma-separated query value, a repeated query key, or a JSON array. */
export const queryList = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
    z.array(item),
  );
