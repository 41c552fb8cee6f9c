/**
 * The check that a gateway's answer is exactly one JSON string literal
 * (core/cloud-wire/protocol.ts says why), in two forms that give the same
 * answers: a WebAssembly function that looks at 64 bytes at a time with
 * 128-bit SIMD, and a scalar loop, used where WebAssembly SIMD is missing.
 * The cloud checks every answer it passes on, some hundred kilobytes each;
 * the SIMD form takes about a fifth of the scalar loop's time on a text of
 * JSON (which escapes every few bytes), and saves 14 to 20 % of the cloud's
 * CPU time per relayed 1,000-machine list_machines (docs/cloud-relay.md,
 * "Figures").
 *
 * The SIMD function finds, per 64-byte block, the bytes below 0x20, the
 * quotes and the backslashes as bit masks, and which characters are escaped
 * with the carry-less method of simdjson (Langdale and Lemire, "Parsing
 * gigabytes of JSON per second", 2019): a run of backslashes escapes the
 * character after it when the run is odd. A quote that is not escaped, an
 * escaped character that is not one of " \ / b f n r t u, or a \u not
 * followed by four hex digits fails the check. Its source is the text
 * literal-check.wat beside this file (WASM_BASE64 below is its assembly);
 * test/cloud/protocol.test.ts holds both forms to JSON.parse on generated
 * texts.
 */
import { isUtf8 } from 'node:buffer';

/** The scalar check: one table load per byte. */
export function isJsonStringLiteralScalar(bytes: Buffer): boolean {
  const n = bytes.length;
  if (n < 2 || bytes[0] !== 0x22 || bytes[n - 1] !== 0x22 || !isUtf8(bytes)) return false;
  const last = n - 1;
  for (let i = 1; i < last; i++) {
    const c = BYTE_CLASS[bytes[i] as number] as number;
    if (c === PLAIN) continue;
    if (c === REFUSED || ++i >= last) return false;
    // An escape: \" \\ \/ \b \f \n \r \t, or \u and four hex digits, all before the closing quote.
    const e = ESCAPE_CLASS[bytes[i] as number];
    if (e === SIMPLE_ESCAPE) continue;
    if (e !== UNICODE_ESCAPE || i + 4 >= last) return false;
    if (!((HEX_DIGIT[bytes[i + 1] as number] as number) & (HEX_DIGIT[bytes[i + 2] as number] as number) & (HEX_DIGIT[bytes[i + 3] as number] as number) & (HEX_DIGIT[bytes[i + 4] as number] as number))) return false;
    i += 4;
  }
  return true;
}

const PLAIN = 0;
const REFUSED = 1;
const SIMPLE_ESCAPE = 1;
const UNICODE_ESCAPE = 2;
/** Inside a JSON string: plain, refused (a quote or a control character) or 2 (a backslash). */
const BYTE_CLASS = new Uint8Array(256);
/** After a backslash: 1 for " \ / b f n r t, 2 for u, else 0. */
const ESCAPE_CLASS = new Uint8Array(256);
/** 1 for 0-9, A-F and a-f. */
const HEX_DIGIT = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) BYTE_CLASS[b] = REFUSED;
BYTE_CLASS[0x22] = REFUSED;
BYTE_CLASS[0x5c] = 2;
for (const c of '"\\/bfnrt') ESCAPE_CLASS[c.charCodeAt(0)] = SIMPLE_ESCAPE;
ESCAPE_CLASS[0x75] = UNICODE_ESCAPE;
for (const c of '0123456789abcdefABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 1;

// ---- The SIMD module ----

/**
 * literal-check.wat beside this file, assembled (wabt's wat2wasm). The text
 * is the source; test/cloud/literal-check-wat.test.ts assembles it and holds
 * these bytes to the result, printing the new value when the text changed.
 */
export const WASM_BASE64 =
  'AGFzbQEAAAABBgFgAX8BfwMCAQAFAwEABAcVAgh2YWxpZGF0ZQAABm1lbW9yeQIACswIAckIAwF/CX4FewJAA0AgASAATwRAIAMg' +
  'AoRQDwsgAf0AAAAhCyAB/QAAECEMIAH9AAAgIQ0gAf0AADAhDiALQSD9D/0mIAxBIP0P/Sb9UCANQSD9D/0m/VAgDkEg/Q/9Jv1Q' +
  '/VMNASALQdwA/Q/9I/1krSAMQdwA/Q/9I/1krUIQhoQgDUHcAP0P/SP9ZK1CIIaEIA5B3AD9D/0j/WStQjCGhCEEIAtBIv0P/SP9' +
  'ZK0gDEEi/Q/9I/1krUIQhoQgDUEi/Q/9I/1krUIghoQgDkEi/Q/9I/1krUIwhoQhBSAEIAJCf4WDIQkgCUIBhkKq1arVqtWq1ap/' +
  'hCAJfUKq1arVqtWq1ap/hSEGIAYgBIMhCiAGIAQgAoSFIQYgCkI/iCECIAUgBkJ/hYNCAFINAUIAIQcgBlBFBEAgBiALQSL9D/0j' +
  'IAtB3AD9D/0j/VAgC0Ev/Q/9I/1QIAtB4gD9D/0j/VAgC0HmAP0P/SP9UCALQe4A/Q/9I/1QIAtB8gD9D/0j/VAgC0H0AP0P/SP9' +
  'UCALQfUA/Q/9I/1Q/WStIAxBIv0P/SMgDEHcAP0P/SP9UCAMQS/9D/0j/VAgDEHiAP0P/SP9UCAMQeYA/Q/9I/1QIAxB7gD9D/0j' +
  '/VAgDEHyAP0P/SP9UCAMQfQA/Q/9I/1QIAxB9QD9D/0j/VD9ZK1CEIaEIA1BIv0P/SMgDUHcAP0P/SP9UCANQS/9D/0j/VAgDUHi' +
  'AP0P/SP9UCANQeYA/Q/9I/1QIA1B7gD9D/0j/VAgDUHyAP0P/SP9UCANQfQA/Q/9I/1QIA1B9QD9D/0j/VD9ZK1CIIaEIA5BIv0P' +
  '/SMgDkHcAP0P/SP9UCAOQS/9D/0j/VAgDkHiAP0P/SP9UCAOQeYA/Q/9I/1QIA5B7gD9D/0j/VAgDkHyAP0P/SP9UCAOQfQA/Q/9' +
  'I/1QIA5B9QD9D/0j/VD9ZK1CMIaEQn+Fg0IAUg0CIAYgC0H1AP0P/SP9ZK0gDEH1AP0P/SP9ZK1CEIaEIA1B9QD9D/0j/WStQiCG' +
  'hCAOQfUA/Q/9I/1krUIwhoSDIQcLIAcgA4RQRQRAIAtBMP0P/SwgC0E5/Q/9Kv1OIAtBIP0P/VAiD0HhAP0P/SwgD0HmAP0P/Sr9' +
  'Tv1Q/WStIAxBMP0P/SwgDEE5/Q/9Kv1OIAxBIP0P/VAiD0HhAP0P/SwgD0HmAP0P/Sr9Tv1Q/WStQhCGhCANQTD9D/0sIA1BOf0P' +
  '/Sr9TiANQSD9D/1QIg9B4QD9D/0sIA9B5gD9D/0q/U79UP1krUIghoQgDkEw/Q/9LCAOQTn9D/0q/U4gDkEg/Q/9UCIPQeEA/Q/9' +
  'LCAPQeYA/Q/9Kv1O/VD9ZK1CMIaEIQggAyAHQgGGhCAHQgKGhCAHQgOGhCAHQgSGhCAIQn+Fg0IAUg0CIAdCP4ggB0I+iIQgB0I9' +
  'iIQgB0I8iIQhAwsgAUHAAGohAQwACwtBAAs=';

/** The little of the WebAssembly JS API used here (the project's TypeScript libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

interface SimdChecker {
  memory: WasmMemory;
  validate: (paddedLength: number) => number;
}

function loadSimd(): SimdChecker | undefined {
  try {
    const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const instance = new wasm.Instance(new wasm.Module(Buffer.from(WASM_BASE64, 'base64')));
    return { memory: instance.exports.memory as WasmMemory, validate: instance.exports.validate as (n: number) => number };
  } catch {
    return undefined;
  }
}

const simdChecker = loadSimd();
/** Below this many bytes, copying into the module costs more than it saves. */
const SIMD_FROM = 256;

let simdOn = true;

/**
 * A benchmark switch, nothing else calls it: `npm run bench -- relay
 * --literal-check` turns the SIMD form off and on in the cloud's process
 * between rounds to measure what it saves on a whole relayed call.
 */
export function useSimdLiteralCheck(on: boolean): boolean {
  simdOn = on;
  return simdChecker !== undefined;
}

/** The SIMD check; the scalar one where WebAssembly SIMD is missing or the text is short. */
export function isJsonStringLiteral(bytes: Buffer): boolean {
  return (simdOn && bytes.length >= SIMD_FROM ? isJsonStringLiteralSimd(bytes) : undefined) ?? isJsonStringLiteralScalar(bytes);
}

/** The SIMD check whatever the length (undefined without WebAssembly SIMD). */
export function isJsonStringLiteralSimd(bytes: Buffer): boolean | undefined {
  if (!simdChecker) return undefined;
  const n = bytes.length;
  if (n < 2 || bytes[0] !== 0x22 || bytes[n - 1] !== 0x22 || !isUtf8(bytes)) return false;
  const inner = n - 2;
  // At least one byte of padding ('z': not special, not an escape, not a hex digit), so a backslash or a \u at the
  // end of the text is judged against it inside the last block.
  const padded = (inner + 1 + 63) & ~63;
  const { memory } = simdChecker;
  if (memory.buffer.byteLength < padded) memory.grow(Math.ceil((padded - memory.buffer.byteLength) / 65536));
  const view = new Uint8Array(memory.buffer, 0, padded);
  view.set(bytes.subarray(1, n - 1));
  view.fill(0x7a, inner);
  return simdChecker.validate(padded) === 1;
}

