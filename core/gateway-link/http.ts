/**
 * The link to a remote gateway over its HTTP API, authenticated with a
 * secret key of a user on that gateway. Every request has a timeout; an
 * answer is read only up to a bound, so a misbehaving gateway cannot
 * exhaust the service. Requests go through node:http(s) on keep-alive
 * connections shared by every link of the process, at most
 * `SOCKETS_PER_GATEWAY` to one gateway (more requests wait for one): a
 * deployment's calls (fences, upload, read-back) reuse a connection instead
 * of opening one each, and a gateway is never sent more requests at once
 * than it has connections.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { EntryInput, EntryOutput, InterfaceEntry } from '../interfaces/registry.js';
import { ProgramBytes } from '../values/program-bytes.js';
import { describeIssues } from '../interfaces/schema-errors.js';
import { linkError } from './calls.js';
import { CallingGatewayLink } from './calling-link.js';
import { GatewayLinkError, type GatewayLink } from './types.js';
import { errorType, injectTrace, startSpan, tracingEnabled, type OpenSpan } from '../telemetry/tracing.js';

export interface HttpGatewayLinkOptions {
  /** Per request; a program upload may take longer on a slow controller. */
  timeoutMs?: number;
  /**
   * The largest answer read, in bytes. The current program comes as text and
   * as base64: a 4 MiB program is 5.6 MiB of base64 plus at most 24 MiB of
   * text (every byte a `\u00XX` escape), which fits.
   */
  maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Connections to one gateway (scheme, host and port) at most, for the whole
 * process: a program service instance transfers to four machines of a
 * gateway at once and reads, announces and lists beside them.
 */
export const SOCKETS_PER_GATEWAY = 16;

/** Agents shared by every link: an idle connection is closed after 30 s, or when the gateway closes it first. */
const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: SOCKETS_PER_GATEWAY, maxFreeSockets: SOCKETS_PER_GATEWAY, timeout: 30_000 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: SOCKETS_PER_GATEWAY, maxFreeSockets: SOCKETS_PER_GATEWAY, timeout: 30_000 }),
};

/** The headers of a request to a gateway: its key, what it takes and sends, and the trace it continues (while tracing is on). */
export function requestHeaders(secretKey: string, body: Buffer | undefined, open: OpenSpan | undefined): OutgoingHttpHeaders {
  return {
    authorization: `Bearer ${secretKey}`,
    accept: 'application/json',
    ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}),
    ...(open ? injectTrace({}, open.context) : {}),
  };
}

/**
 * A POST body as bytes: the JSON of `input`, program bytes written into it as
 * base64 once. Stringified as a whole, a program's base64 would be scanned
 * for escapes, copied into the JSON text and encoded to UTF-8 again, and its
 * length measured: three more passes over 1.4 times its size.
 */
export function postBody(input: Readonly<Record<string, unknown>>): Buffer {
  const plain: Record<string, unknown> = {};
  const programs: [string, string][] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value instanceof ProgramBytes) programs.push([JSON.stringify(key), value.bytes.toString('base64')]);
    else if (value !== undefined) plain[key] = value;
  }
  const json = JSON.stringify(plain);
  if (programs.length === 0) return Buffer.from(json);
  // `{…` + `,"key":"base64"` for each program + `}`: base64 needs no escaping, and its characters are one byte each.
  const head = json.slice(0, -1);
  const fields = programs.map(([key, base64], i) => ({ opening: `${i === 0 && head === '{' ? '' : ','}${key}:"`, base64 }));
  const body = Buffer.allocUnsafe(fields.reduce((size, f) => size + Buffer.byteLength(f.opening) + f.base64.length + 1, Buffer.byteLength(head) + 1));
  let at = body.write(head);
  for (const f of fields) {
    at += body.write(f.opening, at);
    at += body.write(f.base64, at, 'latin1');
    at += body.write('"', at);
  }
  body.write('}', at);
  return body;
}
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export class HttpGatewayLink extends CallingGatewayLink implements GatewayLink {
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  constructor(
    /** Base URL, e.g. `http://10.0.4.7:8080` (no trailing slash needed). */
    readonly target: string,
    private readonly secretKey: string,
    options: HttpGatewayLinkOptions = {},
  ) {
    super();
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Sends the call (GET: the input as the query; POST: as JSON) and parses the answer's data with the entry's output schema. */
  protected async call<E extends InterfaceEntry>(entry: E, input: EntryInput<E>): Promise<EntryOutput<E>> {
    const base = this.target.replace(/\/+$/, '');
    const query = new URLSearchParams();
    if (entry.method === 'GET') for (const [k, v] of Object.entries(input as Record<string, unknown>)) if (v !== undefined) query.set(k, String(v));
    const url = `${base}${entry.path}${entry.method === 'GET' && [...query].length ? `?${query}` : ''}`;
    // A client span under the caller's (none for background work), continued by the gateway's server span.
    const open = tracingEnabled() ? startSpan(`${entry.method} ${entry.path}`, { kind: 'client', childOnly: true, attributes: { 'http.request.method': entry.method, 'url.path': entry.path, 'cncgw.interface': entry.path } }) : undefined;
    try {
      return await this.send(entry, input, url, base, open);
    } catch (err) {
      open?.fail(errorType(err));
      throw err;
    } finally {
      open?.end();
    }
  }

  private async send<E extends InterfaceEntry>(entry: E, input: EntryInput<E>, url: string, base: string, open: OpenSpan | undefined): Promise<EntryOutput<E>> {
    const body = entry.method === 'POST' ? postBody(input as Record<string, unknown>) : undefined;
    const { status, text } = await this.exchange(url, base, entry.method, requestHeaders(this.secretKey, body, open), body);
    open?.set({ 'http.response.status_code': status });
    let answer: { errorCode?: unknown; errorMsg?: unknown; data?: unknown };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new GatewayLinkError(status >= 500 ? 'unreachable' : 'failed', `gateway ${base} answered HTTP ${status} without its JSON envelope`);
    }
    const ok = status >= 200 && status < 300;
    const code = typeof answer.errorCode === 'number' ? answer.errorCode : ok ? 0 : -1;
    if (code !== 0) throw linkError(code, `${typeof answer.errorMsg === 'string' ? answer.errorMsg : `HTTP ${status}`}`);
    const data = entry.output.safeParse(answer.data);
    if (!data.success) {
      throw new GatewayLinkError('failed', `gateway ${base} answered ${entry.path} in a form this service does not know: ${describeIssues(data.error.issues, answer.data).join('; ').slice(0, 300)}`);
    }
    return data.data as EntryOutput<E>;
  }

  /**
   * One request and its whole answer, read up to the bound, within the
   * timeout. A redirect is not followed: its answer has no envelope. A
   * connection whose answer was not read whole is closed, never reused.
   */
  private exchange(url: string, base: string, method: string, headers: OutgoingHttpHeaders, body: Buffer | undefined): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const unreachable = (err: unknown) => {
      const cause = signal.aborted ? `no answer within ${this.timeoutMs} ms` : ((err as { code?: string }).code ?? (err as Error).message);
      return new GatewayLinkError('unreachable', `gateway ${base} unreachable: ${String(cause).slice(0, 200)}`);
    };
    return new Promise((resolve, reject) => {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch (err) {
        reject(unreachable(err));
        return;
      }
      const https = parsed.protocol === 'https:';
      const req = (https ? httpsRequest : httpRequest)(parsed, { method, headers, agent: https ? agents.https : agents.http, signal }, (response) => {
        this.readBounded(response, base).then((text) => resolve({ status: response.statusCode ?? 0, text }), (err: unknown) => {
          response.destroy();
          reject(err instanceof GatewayLinkError ? err : unreachable(err));
        });
      });
      req.on('error', (err) => reject(unreachable(err)));
      req.end(body);
    });
  }

  private async readBounded(response: IncomingMessage, base: string): Promise<string> {
    const declared = Number(response.headers['content-length'] ?? NaN);
    if (declared > this.maxResponseBytes) {
      throw new GatewayLinkError('failed', `gateway ${base} answered ${declared} bytes; at most ${this.maxResponseBytes} are read`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      size += (chunk as Buffer).byteLength;
      if (size > this.maxResponseBytes) {
        throw new GatewayLinkError('failed', `gateway ${base} answered more than ${this.maxResponseBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }
}
