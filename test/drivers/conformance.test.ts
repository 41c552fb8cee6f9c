/**
 * The driver conformance suite: every driver of the registry, against its own
 * peer, passes the same cases (test/drivers/conformance/cases.ts); each row of
 * test/drivers/conformance/peers.ts says how to run one driver's peer.
 */
import { describe, expect, it } from 'vitest';
import { DRIVERS } from '../../drivers/registry.js';
import { conformanceCases } from './conformance/cases.js';
import { PEERS } from './conformance/peers.js';

describe('driver conformance', () => {
  it('has a row for every registered driver', () => {
    expect([...new Set(PEERS.map((row) => row.driver))].sort()).toEqual(DRIVERS.map((driver) => driver.scheme).sort());
  });
});

for (const row of PEERS) conformanceCases(row);
