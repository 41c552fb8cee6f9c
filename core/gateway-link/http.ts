/**
 * The link to a remote gateway over its HTTP API, authenticated with a
 * secret key of a user on that gateway. Every request has a timeout; an
 * answer is read only up to a bound, so a misbehaving gateway cannot
 * exhaust the service.
 */
import type { EntryInput, EntryOutput, InterfaceEntry } from '../interfaces.js';
import { ProgramBytes } from '../program-bytes.js';
import { describeIssues } from '../schema-errors.js';
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
    let response: Response;
    try {
      response = await fetch(url, {
        method: entry.method,
        headers: { authorization: `Bearer ${this.secretKey}`, accept: 'application/json', ...(entry.method === 'POST' ? { 'content-type': 'application/json' } : {}), ...(open ? injectTrace({}, open.context) : {}) },
        ...(entry.method === 'POST' ? { body: postBody(input as Record<string, unknown>) } : {}),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const cause = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
      throw new GatewayLinkError('unreachable', `gateway ${base} unreachable: ${String(cause).slice(0, 200)}`);
    }
    open?.set({ 'http.response.status_code': response.status });
    const text = await this.readBounded(response, base);
    let body: { errorCode?: unknown; errorMsg?: unknown; data?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new GatewayLinkError(response.status >= 500 ? 'unreachable' : 'failed', `gateway ${base} answered HTTP ${response.status} without its JSON envelope`);
    }
    const code = typeof body.errorCode === 'number' ? body.errorCode : response.ok ? 0 : -1;
    if (code !== 0) throw linkError(code, `${typeof body.errorMsg === 'string' ? body.errorMsg : `HTTP ${response.status}`}`);
    const data = entry.output.safeParse(body.data);
    if (!data.success) {
      throw new GatewayLinkError('failed', `gateway ${base} answered ${entry.path} in a form this service does not know: ${describeIssues(data.error.issues, body.data).join('; ').slice(0, 300)}`);
    }
    return data.data as EntryOutput<E>;
  }

  private async readBounded(response: Response, base: string): Promise<string> {
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > this.maxResponseBytes) {
      await response.body?.cancel();
      throw new GatewayLinkError('failed', `gateway ${base} answered ${declared} bytes; at most ${this.maxResponseBytes} are read`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += (chunk as Uint8Array).byteLength;
      if (size > this.maxResponseBytes) {
        throw new GatewayLinkError('failed', `gateway ${base} answered more than ${this.maxResponseBytes} bytes`);
      }
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}
