import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../core/auth/login-throttle.js';

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

function lock(throttle: LoginThrottle, source: string, name: string, now: number): void {
  for (let i = 0; i < 5; i++) throttle.fail(source, name, now);
}

describe('login throttle under floods', () => {
  it('a locked victim stays locked after 20,000 failures under other names from the same source', () => {
    const throttle = new LoginThrottle();
    lock(throttle, '10.0.0.66', 'admin', T0);
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0)).toBe(30);
    for (let i = 0; i < 20_000; i++) throttle.fail('10.0.0.66', `user${i}`, T0 + 1 + (i % 1000));
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0 + 1000)).toBeGreaterThan(0);
    expect(throttle.size).toBeLessThanOrEqual(100);
  });

  it('a locked victim stays locked after 20,000 failures under other names from 20,000 sources', () => {
    const throttle = new LoginThrottle();
    lock(throttle, '10.0.0.66', 'admin', T0);
    for (let i = 0; i < 20_000; i++) throttle.fail(`10.1.${i >> 8}.${i & 255}`, `user${i}`, T0 + 1 + (i % 1000));
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0 + 1000)).toBeGreaterThan(0);
    expect(throttle.size).toBeLessThanOrEqual(10_000);
    // Unlocked records were the ones dropped, oldest first: the newest failures are still counted.
    expect(throttle.size).toBeGreaterThan(9_000);
    // The newest flood record kept its failure: four more lock it.
    const newest = `10.1.${19_999 >> 8}.${19_999 & 255}`;
    for (let i = 0; i < 4; i++) throttle.fail(newest, 'user19999', T0 + 2000);
    expect(throttle.retryAfterSec(newest, 'user19999', T0 + 2000)).toBe(30);
  });

  it('a source whose records are all locked is refused new names until its first lock ends; other sources are not', () => {
    const throttle = new LoginThrottle({ maxKeysPerSource: 10, maxKeys: 1000 });
    for (let i = 0; i < 10; i++) lock(throttle, '10.0.0.66', `user${i}`, T0 + i);
    expect(throttle.size).toBe(10);
    // No room without forgetting a lock: the new name waits, and its failures are not recorded.
    expect(throttle.retryAfterSec('10.0.0.66', 'fresh', T0 + 10)).toBe(30);
    throttle.fail('10.0.0.66', 'fresh', T0 + 10);
    expect(throttle.size).toBe(10);
    expect(throttle.retryAfterSec('10.0.0.77', 'fresh', T0 + 10)).toBe(0);
    // The first lock ends at T0 + 30 s; then that record may give way to the new name.
    expect(throttle.retryAfterSec('10.0.0.66', 'fresh', T0 + 30_000)).toBe(0);
    throttle.fail('10.0.0.66', 'fresh', T0 + 30_000);
    expect(throttle.size).toBe(10);
    expect(throttle.retryAfterSec('10.0.0.66', 'user9', T0 + 30_000)).toBeGreaterThan(0);
  });

  it('when every record in the table is locked, new names are refused rather than a lock forgotten', () => {
    const throttle = new LoginThrottle({ maxKeysPerSource: 10, maxKeys: 20 });
    for (let i = 0; i < 20; i++) lock(throttle, `10.0.${i}.1`, 'admin', T0);
    expect(throttle.retryAfterSec('10.9.9.9', 'admin', T0 + 1)).toBeGreaterThan(0);
    throttle.fail('10.9.9.9', 'admin', T0 + 1);
    expect(throttle.size).toBe(20);
    for (let i = 0; i < 20; i++) expect(throttle.retryAfterSec(`10.0.${i}.1`, 'admin', T0 + 1)).toBeGreaterThan(0);
  });

  it('records expire after their window, and the delay still doubles within it', () => {
    const throttle = new LoginThrottle();
    lock(throttle, '10.0.0.66', 'admin', T0);
    throttle.fail('10.0.0.66', 'admin', T0 + 31_000);
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0 + 31_000)).toBe(60);
    throttle.fail('10.0.0.67', 'bob', T0);
    expect(throttle.size).toBe(2);
    // 15 minutes after the first failure and with no lock left, both are forgotten.
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0 + 16 * MINUTE)).toBe(0);
    expect(throttle.retryAfterSec('10.0.0.67', 'bob', T0 + 16 * MINUTE)).toBe(0);
    expect(throttle.size).toBe(0);
  });

  it('a success clears the record', () => {
    const throttle = new LoginThrottle();
    for (let i = 0; i < 4; i++) throttle.fail('10.0.0.66', 'admin', T0);
    throttle.succeed('10.0.0.66', 'admin');
    throttle.fail('10.0.0.66', 'admin', T0);
    expect(throttle.retryAfterSec('10.0.0.66', 'admin', T0)).toBe(0);
    expect(throttle.size).toBe(1);
  });
});
