/**
 * HTTP to an MTConnect agent: one document with a timeout and a size bound,
 * or a long /sample answer whose parts arrive as the agent writes them. Every
 * failure is a GatewayError naming the URL and what to check.
 */
import http from 'node:http';
import https from 'node:https';
import { GatewayError } from '../../core/interfaces/errors.js';
import { MultipartProblem, MultipartReader, multipartBoundary } from './multipart.js';

export interface HttpLimits {
  timeoutMs: number;
  maxBytes: number;
}

export interface FetchedDocument {
  status: number;
  text: string;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE']);

/** The request's error as a GatewayError: an unreachable agent is not connected, anything else a failed request. */
function requestError(url: URL, error: NodeJS.ErrnoException): GatewayError {
  const code = error.code ?? error.message;
  return new GatewayError(NETWORK_CODES.has(code) ? 'MACHINE_NOT_CONNECTED' : 'DRIVER_REQUEST_FAILED', `mtconnect: agent ${url.origin}${url.pathname}: ${code}`);
}

function send(url: URL, agent: http.Agent | undefined): http.ClientRequest {
  const get = url.protocol === 'https:' ? https.get : http.get;
  return get(url, { agent, headers: { accept: 'application/xml, text/xml' } });
}

/** GETs one document: rejects past `timeoutMs` for the whole answer, or when the body is longer than `maxBytes`. */
export function fetchDocument(url: URL, limits: HttpLimits, agent?: http.Agent): Promise<FetchedDocument> {
  return new Promise<FetchedDocument>((resolve, reject) => {
    const request = send(url, agent);
    const fail = (error: GatewayError) => {
      clearTimeout(timer);
      request.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new GatewayError('DRIVER_TIMEOUT', `mtconnect: agent ${url.origin}${url.pathname} did not answer within ${limits.timeoutMs} ms (driverOptions.requestTimeoutMs)`)),
      limits.timeoutMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) => fail(requestError(url, error)));
    request.on('response', (response) => {
      const declared = Number(response.headers['content-length']);
      if (declared > limits.maxBytes) return fail(tooLarge(url, declared, limits.maxBytes));
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) return fail(tooLarge(url, bytes, limits.maxBytes));
        chunks.push(chunk);
      });
      response.on('error', (error: NodeJS.ErrnoException) => fail(requestError(url, error)));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
  });
}

const tooLarge = (url: URL, bytes: number, max: number) =>
  new GatewayError('DRIVER_REQUEST_FAILED', `mtconnect: agent ${url.origin}${url.pathname} answered ${bytes} bytes or more, over ${max} (driverOptions.maxDocumentBytes)`);

export interface StreamHandlers {
  /** One document of the stream. */
  part(text: string): void;
  /** The stream ended or failed; called once, not after close(). */
  end(reason: string): void;
}

export type OpenedStream = { kind: 'stream'; close(): void } | { kind: 'document'; document: FetchedDocument };

/**
 * Opens a streaming /sample: resolves once the agent answered with a
 * multipart stream (its parts then go to `handlers`), or with the document
 * it answered instead (an error, or a plain document from an agent that does
 * not stream). Rejects when no answer came within `timeoutMs`.
 */
export function openStream(url: URL, limits: HttpLimits, handlers: StreamHandlers, agent?: http.Agent): Promise<OpenedStream> {
  return new Promise<OpenedStream>((resolve, reject) => {
    const request = send(url, agent);
    let opened = false;
    let closed = false;
    const timer = setTimeout(() => {
      request.destroy();
      reject(new GatewayError('DRIVER_TIMEOUT', `mtconnect: agent ${url.origin}${url.pathname} did not answer within ${limits.timeoutMs} ms (driverOptions.requestTimeoutMs)`));
    }, limits.timeoutMs);
    const end = (reason: string) => {
      if (closed) return;
      closed = true;
      request.destroy();
      handlers.end(reason);
    };
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (!opened) reject(requestError(url, error));
      else end(requestError(url, error).detail ?? 'stream failed');
    });
    request.on('response', (response) => {
      const boundary = multipartBoundary(response.headers['content-type']);
      if (!boundary) {
        clearTimeout(timer);
        fetchBody(url, response, limits).then((document) => resolve({ kind: 'document', document }), reject);
        return;
      }
      clearTimeout(timer);
      opened = true;
      const reader = new MultipartReader(boundary, limits.maxBytes, (text) => {
        if (!closed) handlers.part(text);
      });
      response.on('data', (chunk: Buffer) => {
        if (closed) return;
        try {
          reader.push(chunk);
        } catch (error) {
          end(`mtconnect: agent ${url.origin}${url.pathname} sent a stream that is not multipart: ${error instanceof MultipartProblem ? error.message : String(error)}`);
        }
      });
      response.on('end', () => end(`mtconnect: agent ${url.origin} ended the stream`));
      response.on('error', (error: NodeJS.ErrnoException) => end(requestError(url, error).detail ?? 'stream failed'));
      resolve({
        kind: 'stream',
        close: () => {
          closed = true;
          request.destroy();
        },
      });
    });
  });
}

/** The rest of a response already begun, bounded like a document. */
function fetchBody(url: URL, response: http.IncomingMessage, limits: HttpLimits): Promise<FetchedDocument> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const timer = setTimeout(() => {
      response.destroy();
      reject(new GatewayError('DRIVER_TIMEOUT', `mtconnect: agent ${url.origin}${url.pathname} did not finish its answer within ${limits.timeoutMs} ms`));
    }, limits.timeoutMs);
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) {
        clearTimeout(timer);
        response.destroy();
        reject(tooLarge(url, bytes, limits.maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => {
      clearTimeout(timer);
      resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
    });
    response.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(requestError(url, error));
    });
  });
}

/** `promise`, or `fallback()` once `ms` passed without it. */
export function withFallback<T>(promise: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback()), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
