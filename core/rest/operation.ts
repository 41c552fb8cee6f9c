/**
 * An operation of the `/api/v1` REST surface, defined once: method, path
 * with `{param}` segments, zod schemas of its path parameters, query, body
 * and of every success response, the permission it needs and its handler.
 * Routes and the OpenAPI 3.1 document are generated from these definitions
 * (core/rest/serve.ts, core/rest/openapi.ts), as the gateway's `/api` is
 * generated from its interface registry; the error format differs (problem
 * documents, core/rest/problem.ts).
 */
import type { z } from 'zod';
import type { Logger } from 'pino';

export type RestMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The header a service token names its human operator in (RestPrincipal.onBehalfOf). */
export const OPERATOR_HEADER = 'x-on-behalf-of';

/** The library scope of a caller: every library, or the listed library ids. */
export type LibraryScope = '*' | readonly string[];

/** Who is calling the program service. */
export interface RestPrincipal {
  kind: 'user' | 'serviceToken';
  /** The user's or service token's id. */
  id: string;
  /** The user name, or the service token's name; recorded in the audit as principalName. */
  name: string;
  role: string;
  /** What the role permits (`vault.read`, `versions.upload`, …); an operation names one. */
  permissions: ReadonlySet<string>;
  /** Libraries, and machine groups (absent: every group), the caller may act on. */
  scopes: { libraries: LibraryScope; machineGroups?: LibraryScope };
  /** How the caller authenticated: a session cookie, a service token, or an access token of the identity provider. */
  authMethod: 'session' | 'serviceToken' | 'accessToken';
  /** The human operator declared by X-On-Behalf-Of, or null. */
  onBehalfOf: string | null;
  /** A service token with "high-risk operations need an operator". */
  requiresOperator: boolean;
  /** The session's id (not its secret), for logout and change-password. */
  sessionId?: string;
  /** A session opened by a sign-in through the identity provider: when the person last authenticated there (unix ms; null: the provider did not say). */
  identityProvider?: { authTime: number | null };
}

/**
 * The service acting for itself (deployment and trial runners, the mirror):
 * it sees every library and machine and holds no permission of a role, so it
 * is never the principal of a request.
 */
export const SERVICE_PRINCIPAL: RestPrincipal = Object.freeze({
  kind: 'user', id: 'system', name: 'system', role: 'system', permissions: new Set<string>(), scopes: { libraries: '*', machineGroups: '*' },
  authMethod: 'session', onBehalfOf: null, requiresOperator: false,
}) as RestPrincipal;

/** Request facts an authenticator may use: headers only, the body is not read yet. */
export interface RestRequestInfo {
  method: string;
  /** Path without the query string, e.g. `/api/v1/programs/p1/versions`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  sourceIp: string;
  /** Whether the listener serves TLS (cookie `Secure` and `__Host-` prefix). */
  secure: boolean;
}

/**
 * The access seam of the surface. The accounts plugin provides it: it reads
 * the session cookie or bearer token, checks CSRF for unsafe methods sent
 * with a cookie, and returns the principal, null for an anonymous caller, or
 * throws a ProblemError (401, 403 csrf-check-failed, 429).
 */
export interface RestAuthenticator {
  authenticate(request: RestRequestInfo): Promise<RestPrincipal | null>;
}

/** What a handler gets besides its validated input. */
export interface RestCallContext {
  /** The caller; null only on public operations (`permission: null`). */
  principal: RestPrincipal | null;
  request: RestRequestInfo;
  logger: Logger;
}

/** Extra response headers a handler sets (ETag, Location, Set-Cookie; content-type picks one of a status's content types); an undefined one is not sent. */
export type RestHeaders = Record<string, string | string[] | undefined>;

/** A handler's answer, untyped: the status (one of the operation's `responses`), a body and extra headers. */
export interface RestResult {
  status: number;
  /** JSON-serialisable value, raw bytes (Buffer), or text chunks to stream (CSV export); omitted for 204. */
  body?: unknown;
  headers?: RestHeaders;
}

/** A success response of an operation, for the route and the OpenAPI document. */
export interface RestResponseSpec {
  description: string;
  /** JSON body schema; for another content type, the body's shape as JSON Schema sees it (e.g. a string). */
  schema?: z.ZodType;
  /** Defaults to application/json; e.g. `application/octet-stream`, `text/csv`. */
  contentType?: string;
  /** Other content types the same status may carry, chosen by the request (e.g. `format=base64` → JSON); the handler sets content-type. */
  also?: readonly { contentType: string; schema?: z.ZodType }[];
  /** Response headers worth documenting (ETag, Set-Cookie). */
  headers?: Record<string, string>;
}

/**
 * A request header an operation's handler reads (Idempotency-Key,
 * If-None-Match), declared so the OpenAPI document offers it to generated
 * clients. The headers every authenticated operation reads (X-On-Behalf-Of,
 * X-CSRF-Token) are declared by the surface itself.
 */
export interface RestHeaderParameter {
  /** As clients spell it: `Idempotency-Key`. Read in lower case from the request. */
  name: string;
  description: string;
  /** Longest value the handler accepts, in characters. */
  maxLength?: number;
}

/** Every success status of an operation with its response. */
export type RestResponses = Readonly<Record<number, RestResponseSpec>>;

/** Bytes or streamed text: the body of a response whose content type is not JSON. */
export type RestRawBody = Buffer | AsyncIterable<string>;
type FieldOf<T, K extends PropertyKey> = K extends keyof T ? T[K] : undefined;
type JsonBodyOf<S> = S extends z.ZodType ? z.input<S> : never;
/** The body one content type of a response carries: the schema's input for JSON (none without a schema), else raw. */
type ContentBody<C, S> = [C] extends [undefined]
  ? JsonBodyOf<S>
  : C extends `application/json${string}` ? JsonBodyOf<S> : string extends C ? JsonBodyOf<S> | RestRawBody : RestRawBody;
type AlsoBody<A> = A extends readonly (infer E)[] ? (E extends unknown ? ContentBody<FieldOf<E, 'contentType'>, FieldOf<E, 'schema'>> : never) : never;
/** The body of one response: its main content type's, or one of `also`. */
type SpecBody<Spec> = ContentBody<FieldOf<Spec, 'contentType'>, FieldOf<Spec, 'schema'>> | AlsoBody<FieldOf<Spec, 'also'>>;
type ResultFor<S extends number, Spec> = S extends 204 | 304
  ? { status: S; body?: undefined; headers?: RestHeaders }
  : [SpecBody<Spec>] extends [never]
    ? { status: S; body?: undefined; headers?: RestHeaders }
    : { status: S; body: SpecBody<Spec>; headers?: RestHeaders };

/**
 * What a handler of an operation with `responses` R may answer: one of its
 * statuses with that status's body, checked by the compiler. A JSON body is
 * the schema's input (what the schema would accept); a response of another
 * content type carries bytes or streamed text; 204, 304 and a response
 * without a schema carry none. Untyped (RestResult) for an operation whose
 * responses are not known.
 */
export type RestResultOf<R extends RestResponses> = number extends keyof R
  ? RestResult
  : { [S in keyof R & number]: ResultFor<S, R[S]> }[keyof R & number];

/**
 * The handler's declared result. The `status` member repeats the statuses as
 * a type the compiler keeps literal while it infers R, so that a handler
 * returning `{ status: 201, … }` is read as 201 (not number) and checked
 * against that status's body.
 */
type HandlerResult<R extends RestResponses> = { status: R extends unknown ? Extract<keyof R, number> : never } & RestResultOf<R>;

/** What an operation is, besides its inputs, results and handler. */
interface RestOperationInfo {
  /** Unique, camelCase (`uploadVersion`); the OpenAPI operationId. */
  operationId: string;
  method: RestMethod;
  /** Under /api/v1, with `{name}` path parameters: `/programs/{id}/versions`. */
  path: `/${string}`;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** The permission the caller's role must hold; null for a public operation (login). */
  permission: string | null;
  /** A high-risk operation: refused (403 operator-required) for a token that requires an operator when X-On-Behalf-Of is absent. */
  highRisk?: boolean;
  /** Request headers the handler reads, for the document. */
  headers?: readonly RestHeaderParameter[];
  /** Largest body read, in bytes; defaults to the surface's (64 KiB). */
  bodyLimit?: number;
  /** Problem statuses this operation answers beyond the surface's usual ones (e.g. 429 for login). */
  problems?: readonly number[];
}

/**
 * An operation as it is declared: schemas of its path parameters (P), query
 * (Q) and body (B), its success responses (R), and a handler that gets the
 * parsed inputs and may only answer one of R's statuses with its body.
 */
export interface RestOperation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends RestResponses = RestResponses,
> extends RestOperationInfo {
  params?: P;
  query?: Q;
  body?: B;
  /** Every success status with its schema; problem responses are added by the surface. */
  responses: R;
  handler(input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> }, ctx: RestCallContext): Promise<HandlerResult<R>> | HandlerResult<R>;
}

/**
 * Any operation, its inputs' and results' types erased (they were checked
 * where it was declared): what the registry keeps and serves, and the type
 * of a list of operations of different shapes.
 */
export interface AnyRestOperation extends RestOperationInfo {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  responses: RestResponses;
  handler(input: { params: unknown; query: unknown; body: unknown }, ctx: RestCallContext): Promise<RestResult> | RestResult;
}

/** Declares an operation; the identity function exists for type inference (of its inputs and of the results its handler may give). */
export function defineOperation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  const R extends RestResponses = RestResponses,
>(op: RestOperation<P, Q, B, R>): NoInfer<RestOperation<P, Q, B, R>> {
  return op;
}

/** A caller refused by the surface for its role or a missing operator (403), for the audit. */
export interface RestRefusal {
  principal: RestPrincipal;
  operation: AnyRestOperation;
  slug: 'forbidden' | 'operator-required';
  request: RestRequestInfo;
}

/** The operations of one surface; plugins add theirs, the surface serves them all. */
export class RestRegistry {
  private readonly ops = new Map<string, AnyRestOperation>();
  private readonly schemes = new Map<string, Record<string, unknown>>();
  private authenticator: RestAuthenticator = { authenticate: () => Promise.resolve(null) };
  private readonly refusalListeners: ((refusal: RestRefusal) => Promise<void> | void)[] = [];

  define(op: AnyRestOperation): void {
    const key = `${op.method} ${op.path}`;
    if (this.ops.has(key)) throw new Error(`operation ${key} is defined twice`);
    for (const other of this.ops.values()) {
      if (other.operationId === op.operationId) throw new Error(`operationId ${op.operationId} is used by ${other.method} ${other.path} and ${key}`);
    }
    this.ops.set(key, op);
  }

  list(): AnyRestOperation[] {
    return [...this.ops.values()];
  }

  setAuthenticator(authenticator: RestAuthenticator): void {
    this.authenticator = authenticator;
  }

  get access(): RestAuthenticator {
    return this.authenticator;
  }

  /** Declares a further way to authenticate (an OpenAPI security scheme) that every operation needing a permission accepts, e.g. the identity provider's access tokens. */
  addSecurityScheme(name: string, scheme: Record<string, unknown>): void {
    if (this.schemes.has(name)) throw new Error(`security scheme ${name} is declared twice`);
    this.schemes.set(name, scheme);
  }

  /** The further security schemes, by name. */
  securitySchemes(): ReadonlyMap<string, Record<string, unknown>> {
    return this.schemes;
  }

  /** Tells `listener` about every refusal of an authenticated caller (403); a failing listener does not change the answer. */
  onRefusal(listener: (refusal: RestRefusal) => Promise<void> | void): void {
    this.refusalListeners.push(listener);
  }

  async reportRefusal(refusal: RestRefusal): Promise<void> {
    for (const listener of this.refusalListeners) await Promise.resolve(listener(refusal)).catch(() => undefined);
  }
}
