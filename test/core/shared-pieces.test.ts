/** Small pieces of the runtime that several roles and drivers share: JSON value checks, hashes, alarm levels. */
import { describe, expect, it } from 'vitest';
import { isRecord } from '../../core/values/json-value.js';
import { sha256Hex } from '../../core/values/hash.js';
import { ACTIVE_ALARM_LEVELS, ALARM_LEVEL_RANK, ALARM_LEVELS, worstAlarmLevel, type AlarmLevel } from '../../core/driver-seam/driver.js';

describe('shared pieces of the runtime', () => {
  it('isRecord is true for a JSON object only', () => {
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    for (const v of [null, undefined, [], [1], 'x', 1, true]) expect(isRecord(v), JSON.stringify(v)).toBe(false);
  });

  it('sha256Hex gives the SHA-256 of bytes and of text as 64 lowercase hex digits', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(sha256Hex('abc')).toBe(abc);
    expect(sha256Hex(Buffer.from('abc'))).toBe(abc);
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(abc);
    expect(sha256Hex(Buffer.alloc(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('alarm levels are ranked none < warning < alarm < emergency, and the worst of a list is its most severe', () => {
    expect([...ALARM_LEVELS].sort((a, b) => ALARM_LEVEL_RANK[a] - ALARM_LEVEL_RANK[b])).toEqual(['none', 'warning', 'alarm', 'emergency']);
    expect(ACTIVE_ALARM_LEVELS).toEqual(ALARM_LEVELS.filter((l) => l !== 'none'));
    const of = (...levels: AlarmLevel[]) => worstAlarmLevel(levels.map((level) => ({ level })));
    expect(of()).toBe('none');
    expect(of('warning')).toBe('warning');
    expect(of('warning', 'emergency', 'alarm')).toBe('emergency');
    expect(of('alarm', 'warning')).toBe('alarm');
  });
});
