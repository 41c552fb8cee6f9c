/**
 * The Gateways page names the interfaces of a remote gateway a secret key's
 * user needs: the list it shows is the one the program service's gateway
 * link calls, so the page cannot promise a key that works while the service
 * calls one more interface. The link's calls are read from the link itself:
 * every method of it is called once, and the entries it calls are noted.
 */
import { describe, expect, it } from 'vitest';
import { CallingGatewayLink } from '../../../core/gateway-link/calling-link.js';
import type { GatewayLink } from '../../../core/gateway-link/types.js';
import type { EntryOutput, InterfaceEntry } from '../../../core/interfaces/registry.js';
import { GATEWAY_INTERFACES_NEEDED } from '../../../plugins/console/web/programs/gateway-needs.js';

/** A link whose calls go nowhere: it notes the path of each entry called. */
class NotingLink extends CallingGatewayLink {
  readonly called: string[] = [];

  protected call<E extends InterfaceEntry>(entry: E): Promise<EntryOutput<E>> {
    this.called.push(entry.path);
    return Promise.reject(new Error('not sent'));
  }
}

type LinkMethod = Exclude<keyof GatewayLink, 'target' | 'watchFleet'>;

/** Arguments for each of the link's methods. */
const ARGUMENTS: { [M in LinkMethod]: Parameters<GatewayLink[M]> } = {
  identity: [],
  listMachines: [],
  listGroups: [],
  listPrograms: ['M1'],
  uploadProgram: ['M1', '/', 'O1', Buffer.alloc(1), { lease: 'dep_1', epoch: 1 }],
  downloadProgram: ['M1', '/', 'O1'],
  programHash: ['M1', '/', 'O1'],
  announceFences: [[{ machineID: 'M1', dir: '/', name: 'O1', fence: { lease: 'dep_1', epoch: 1 } }]],
  currentProgram: ['M1'],
  programCapabilities: ['M1'],
  history: ['M1', 'Count', 0, 1, 1],
};

describe('the interfaces a remote gateway\'s key needs', () => {
  it('PV-33 the Gateways page lists every interface the gateway link calls, and no other', async () => {
    const link = new NotingLink();
    const methods = Object.getOwnPropertyNames(CallingGatewayLink.prototype).filter((name) => name !== 'constructor');
    // Every method the link has is called below.
    expect(methods.sort()).toEqual(Object.keys(ARGUMENTS).sort());
    for (const method of methods) {
      const call = link[method as LinkMethod] as (...args: unknown[]) => Promise<unknown>;
      await expect(call.apply(link, ARGUMENTS[method as LinkMethod])).rejects.toThrow('not sent');
    }
    expect(link.called).toHaveLength(methods.length);
    expect(GATEWAY_INTERFACES_NEEDED.map((n) => n.path).sort()).toEqual([...new Set(link.called)].sort());
  });
});
