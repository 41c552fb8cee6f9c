/**
 * The check that a gateway's answer is exactly one JSON string literal
 * (core/cloud/protocol.ts says why), in two forms that give the same
 * answers: a WebAssembly function that looks at 64 bytes at a time with
 * 128-bit SIMD, and a scalar loop, used where WebAssembly SIMD is missing.
 * The cloud checks every answer it passes on, some hundred kilobytes each;
 * the scalar loop takes about a microsecond per kilobyte of a text of JSON
 * (which escapes every few bytes), the SIMD one a small fraction of that.
 *
 * The SIMD function finds, per 64-byte block, the bytes below 0x20, the
 * quotes and the backslashes as bit masks, and which characters are escaped
 * with the carry-less method of simdjson (Langdale and Lemire, "Parsing
 * gigabytes of JSON per second", 2019): a run of backslashes escapes the
 * character after it when the run is odd. A quote that is not escaped, an
 * escaped character that is not one of " \ / b f n r t u, or a \u not
 * followed by four hex digits fails the check. The module is assembled here
 * from its instructions (no build step); test/cloud/protocol.test.ts holds
 * both forms to JSON.parse on generated texts.
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

const uleb = (value: number): number[] => {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
};

const sleb = (value: bigint): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n;
    if ((value === 0n && (byte & 0x40) === 0) || (value === -1n && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
};

// Locals: 0 n (the padded length), 1 p, then i64 2 prev (the next block's first byte is escaped), 3 need (bytes of
// this block that must be hex digits, from a \u of the block before), 4 b, 5 q, 6 e, 7 u, 8 h, 9 t, 10 esc;
// v128 11-14 the block's four vectors, 15 a temporary.
const N = 0, P = 1, PREV = 2, NEED = 3, B = 4, Q = 5, E = 6, U = 7, H = 8, T = 9, ESC = 10, X = 11, Y = 15;
const I64 = 0x7e, V128 = 0x7b, I32 = 0x7f, VOID = 0x40;

const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const tee = (i: number) => [0x22, i];
const i32 = (v: number) => [0x41, ...sleb(BigInt(v))];
const i64 = (v: bigint) => [0x42, ...sleb(BigInt.asIntN(64, v))];
const simd = (op: number) => [0xfd, ...uleb(op)];
const OP = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d, return: 0x0f,
  i32GeU: 0x4f, i32Eqz: 0x45, i32Add: 0x6a, i64Eqz: 0x50, i64Ne: 0x52, i64Sub: 0x7d, i64And: 0x83, i64Or: 0x84, i64Xor: 0x85, i64Shl: 0x86, i64ShrU: 0x88, i64ExtendI32U: 0xad,
};
const V = { load: 0x00, splat: 0x0f, eq: 0x23, ltU: 0x26, leU: 0x2a, geU: 0x2c, and: 0x4e, or: 0x50, anyTrue: 0x53, bitmask: 0x64 };
const splat = (c: number) => [...i32(c), ...simd(V.splat)];
const not64 = [...i64(-1n), OP.i64Xor];
/** The 64-bit mask of the block's bytes for which `vector(k)` (leaving a v128 of 0x00/0xff lanes for vector k) is true. */
const mask = (vector: (k: number) => number[]) => [0, 1, 2, 3].flatMap((k) => [
  ...vector(k), ...simd(V.bitmask), OP.i64ExtendI32U, ...(k > 0 ? [...i64(BigInt(16 * k)), OP.i64Shl, OP.i64Or] : []),
]);
const equals = (c: number) => (k: number) => [...get(X + k), ...splat(c), ...simd(V.eq)];
const VALID_ESCAPES = [...'"\\/bfnrtu'].map((c) => c.charCodeAt(0));
const ODD = 0xaaaaaaaaaaaaaaaan;

const body = [
  OP.block, VOID,
  OP.loop, VOID,
  // The end of the text: what a \u or a backslash of the last block asked of the next one must be nothing.
  ...get(P), ...get(N), OP.i32GeU, OP.if, VOID,
  ...get(NEED), ...get(PREV), OP.i64Or, OP.i64Eqz, OP.return,
  OP.end,
  ...[0, 1, 2, 3].flatMap((k) => [...get(P), ...simd(V.load), 0, 16 * k, ...set(X + k)]),
  // A control character anywhere fails.
  ...[0, 1, 2, 3].flatMap((k) => [...get(X + k), ...splat(0x20), ...simd(V.ltU), ...(k > 0 ? simd(V.or) : [])]),
  ...simd(V.anyTrue), OP.brIf, 1,
  ...mask(equals(0x5c)), ...set(B),
  ...mask(equals(0x22)), ...set(Q),
  // Escaped characters (simdjson): t = backslashes that are not themselves escaped.
  ...get(B), ...get(PREV), ...not64, OP.i64And, ...set(T),
  ...get(T), ...i64(1n), OP.i64Shl, ...i64(ODD), OP.i64Or, ...get(T), OP.i64Sub, ...i64(ODD), OP.i64Xor, ...set(E),
  ...get(E), ...get(B), OP.i64And, ...set(ESC),
  ...get(E), ...get(B), ...get(PREV), OP.i64Or, OP.i64Xor, ...set(E),
  ...get(ESC), ...i64(63n), OP.i64ShrU, ...set(PREV),
  // A quote that is not escaped fails (the closing quote is not in the block).
  ...get(Q), ...get(E), ...not64, OP.i64And, ...i64(0n), OP.i64Ne, OP.brIf, 1,
  ...i64(0n), ...set(U),
  ...get(E), OP.i64Eqz, OP.i32Eqz, OP.if, VOID,
  // An escaped character must be one of " \ / b f n r t u.
  ...get(E),
  ...mask((k) => VALID_ESCAPES.flatMap((c, j) => [...get(X + k), ...splat(c), ...simd(V.eq), ...(j > 0 ? simd(V.or) : [])])),
  ...not64, OP.i64And, ...i64(0n), OP.i64Ne, OP.brIf, 2,
  ...get(E), ...mask(equals(0x75)), OP.i64And, ...set(U),
  OP.end,
  // After each \u, four hex digits (some of them maybe in the next block).
  ...get(U), ...get(NEED), OP.i64Or, OP.i64Eqz, OP.i32Eqz, OP.if, VOID,
  ...mask((k) => [
    ...get(X + k), ...splat(0x30), ...simd(V.geU), ...get(X + k), ...splat(0x39), ...simd(V.leU), ...simd(V.and),
    ...get(X + k), ...splat(0x20), ...simd(V.or), ...tee(Y), ...splat(0x61), ...simd(V.geU), ...get(Y), ...splat(0x66), ...simd(V.leU), ...simd(V.and),
    ...simd(V.or),
  ]), ...set(H),
  ...get(NEED), ...[1n, 2n, 3n, 4n].flatMap((s) => [...get(U), ...i64(s), OP.i64Shl, OP.i64Or]),
  ...get(H), ...not64, OP.i64And, ...i64(0n), OP.i64Ne, OP.brIf, 2,
  ...get(U), ...i64(63n), OP.i64ShrU, ...[62n, 61n, 60n].flatMap((s) => [...get(U), ...i64(s), OP.i64ShrU, OP.i64Or]), ...set(NEED),
  OP.end,
  ...get(P), ...i32(64), OP.i32Add, ...set(P),
  OP.br, 0,
  OP.end,
  OP.end,
  ...i32(0),
  OP.end,
];

const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
const name = (s: string) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const locals = [...uleb(3), ...uleb(1), I32, ...uleb(9), I64, ...uleb(5), V128];
const code = [...locals, ...body];
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 1, I32, 1, I32]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0x00, ...uleb(4)]),
  ...section(7, [2, ...name('validate'), 0x00, 0, ...name('memory'), 0x02, 0]),
  ...section(10, [1, ...uleb(code.length), ...code]),
]);

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
    const instance = new wasm.Instance(new wasm.Module(MODULE));
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

