/**
 * The SIMD literal check's source is its text form, core/cloud-wire/literal-check.wat;
 * the module the cloud runs is the text assembled by wabt (the WebAssembly
 * Binary Toolkit), kept as WASM_BASE64 in core/cloud-wire/literal-check.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import initWabt from 'wabt';
import { describe, expect, it } from 'vitest';
import { WASM_BASE64 } from '../../core/cloud-wire/literal-check.js';

const WAT = resolve(import.meta.dirname, '../../core/cloud-wire/literal-check.wat');

/** The base64 text as it is written in literal-check.ts: 100 characters a line. */
const asSource = (base64: string) => `export const WASM_BASE64 =\n${(base64.match(/.{1,100}/g) ?? []).map((line) => `  '${line}'`).join(' +\n')};`;

describe('the SIMD literal check', () => {
  it('literal-check.wat assembles into exactly the bytes the cloud runs', async () => {
    const wabt = await initWabt();
    const module = wabt.parseWat('literal-check.wat', readFileSync(WAT, 'utf8'), { simd: true });
    try {
      module.resolveNames();
      module.validate();
      const assembled = Buffer.from(module.toBinary({ log: false, write_debug_names: false }).buffer).toString('base64');
      expect(assembled, `literal-check.wat changed: put this in core/cloud-wire/literal-check.ts\n${asSource(assembled)}\n`).toBe(WASM_BASE64);
    } finally {
      module.destroy();
    }
  });
});
