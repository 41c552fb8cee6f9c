/** The HTTP link's POST bodies (core/gateway-link/http.ts): program bytes written into the JSON as base64 once, after the rest as JSON.stringify writes it. */
import { describe, expect, it } from 'vitest';
import { postBody } from '../../../core/gateway-link/http.js';
import { ProgramBytes } from '../../../core/values/program-bytes.js';
import { tapeProgram } from '../../fixtures/tape-program.js';

describe('a POST body of the HTTP link', () => {
  it('is the JSON of its input, program bytes as base64, whatever the other fields hold', () => {
    const bytes = tapeProgram('O4141');
    const input = { machineID: 'M-ü "1"', dir: '//CNC_MEM/USER/PATH1/', name: 'O4141', contentBase64: new ProgramBytes(bytes), fenceLease: 'dep_1', fenceEpoch: 3, skipped: undefined };
    expect(JSON.parse(postBody(input).toString('utf8'))).toEqual({ ...input, contentBase64: bytes.toString('base64'), skipped: undefined });
    // The program's field comes last.
    expect(postBody(input).toString('utf8')).toMatch(/"fenceEpoch":3,"contentBase64":"[A-Za-z0-9+/=]+"}$/);
  });

  it('with program bytes alone, or none', () => {
    const bytes = Buffer.from([0, 0xd8, 0x0d, 0x0a, 0xff]);
    expect(postBody({ contentBase64: new ProgramBytes(bytes) }).toString('utf8')).toBe(JSON.stringify({ contentBase64: bytes.toString('base64') }));
    expect(postBody({ fences: [{ machineID: 'M1', fenceEpoch: 2 }] }).toString('utf8')).toBe('{"fences":[{"machineID":"M1","fenceEpoch":2}]}');
    expect(postBody({}).toString('utf8')).toBe('{}');
  });
});
