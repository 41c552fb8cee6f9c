/**
 * The Gateways page names the interfaces of a remote gateway a secret key's
 * user needs: the list it shows is the one the program service's gateway
 * link calls, so the page cannot promise a key that works while the service
 * calls one more interface.
 */
import { describe, expect, it } from 'vitest';
import { CALLS } from '../../../core/gateway-link/calls.js';
import { GATEWAY_INTERFACES_NEEDED } from '../../../plugins/console/web/programs/gateway-needs.js';

describe('the interfaces a remote gateway\'s key needs', () => {
  it('PV-33 the Gateways page lists every interface the gateway link calls, and no other', () => {
    const called = [
      CALLS.machines(), CALLS.groups(), CALLS.programs('M1'), CALLS.upload('M1', '/', 'O1', Buffer.alloc(0)), CALLS.download('M1', '/', 'O1'),
      CALLS.current('M1'), CALLS.capabilities('M1'), CALLS.history('M1', 'Count', 0, 1, 1),
    ].map((c) => c.path);
    // Every call the link has is asked for above.
    expect(called).toHaveLength(Object.keys(CALLS).length);
    expect(GATEWAY_INTERFACES_NEEDED.map((n) => n.path).sort()).toEqual([...new Set(called)].sort());
  });
});
