/**
 * The body of an agent's streaming answer (`multipart/x-mixed-replace`), cut
 * into its documents as they arrive: each part is `--boundary`, headers with
 * its Content-length, a blank line, and that many bytes. Bounded: a part
 * longer than `maxPartBytes`, headers longer than 8 KiB, or bytes that are
 * not a part throw, and the caller drops the stream.
 */

const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

/** A stream that does not follow the multipart framing. */
export class MultipartProblem extends Error {}

/** The boundary of a `multipart/x-mixed-replace;boundary=…` content type, or undefined when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/x-mixed-replace/i.test(contentType.trim())) return undefined;
  const match = /boundary\s*=\s*("([^"]+)"|[^;\s]+)/i.exec(contentType);
  return match ? (match[2] ?? match[1]) : undefined;
}

export class MultipartReader {
  private readonly marker: Buffer;
  private buffer: Buffer = Buffer.alloc(0);
  /** Chunks of the body being read, and how many bytes it still needs. */
  private body: { chunks: Buffer[]; have: number; length: number } | undefined;

  constructor(
    boundary: string,
    private readonly maxPartBytes: number,
    private readonly onPart: (text: string) => void,
  ) {
    this.marker = Buffer.from(`--${boundary}`);
  }

  push(chunk: Buffer): void {
    if (this.body) {
      this.body.chunks.push(chunk);
      this.body.have += chunk.length;
      if (this.body.have < this.body.length) return;
      const all = Buffer.concat(this.body.chunks);
      const length = this.body.length;
      this.body = undefined;
      this.onPart(all.subarray(0, length).toString('utf8'));
      this.buffer = all.subarray(length);
    } else {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    }
    this.parse();
  }

  private parse(): void {
    for (;;) {
      const at = this.buffer.indexOf(this.marker);
      if (at < 0) {
        // Only the CRLF after a part and the start of the next marker may wait here.
        if (this.buffer.length > this.marker.length + MAX_HEADER_BYTES) throw new MultipartProblem(`${this.buffer.length} bytes without a part boundary`);
        return;
      }
      const headersAt = at + this.marker.length;
      const end = this.buffer.indexOf(HEADER_END, headersAt);
      if (end < 0) {
        if (this.buffer.length - headersAt > MAX_HEADER_BYTES) throw new MultipartProblem(`part headers longer than ${MAX_HEADER_BYTES} bytes`);
        return;
      }
      const headers = this.buffer.subarray(headersAt, end).toString('latin1');
      const match = /content-length\s*:\s*(\d+)/i.exec(headers);
      if (!match) throw new MultipartProblem('a part without a Content-length');
      const length = Number(match[1]);
      if (length > this.maxPartBytes) throw new MultipartProblem(`a part of ${length} bytes, more than ${this.maxPartBytes} (driverOptions.maxDocumentBytes)`);
      const rest = this.buffer.subarray(end + HEADER_END.length);
      if (rest.length < length) {
        this.body = { chunks: [rest], have: rest.length, length };
        this.buffer = Buffer.alloc(0);
        return;
      }
      this.onPart(rest.subarray(0, length).toString('utf8'));
      this.buffer = rest.subarray(length);
    }
  }
}
