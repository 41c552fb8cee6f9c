/**
 * A link to the gateway of another instance, over HTTP at the address
 * registered for it, that first asks the gateway who it is and goes on only
 * when it is the gateway of the entry (its gatewayID): an address that leads
 * to another gateway (a host renamed, an address reused, a typing mistake)
 * never gets a file meant for this one's machines. Asked once, and again
 * after a call that did not reach the gateway.
 */
import { GatewayLinkError, type GatewayLink, type LinkIdentity } from '../../core/gateway-link/types.js';

export class IdentifiedLink implements GatewayLink {
  readonly target: string;
  private checked: Promise<void> | undefined;

  constructor(
    private readonly inner: GatewayLink,
    /** The gatewayID the entry was registered with. */
    private readonly expected: string,
    /** The entry's name and id, for messages. */
    private readonly entry: { id: string; name: string },
  ) {
    this.target = inner.target;
  }

  /** Whether the gateway at the address is the entry's; a failed check is asked again at the next call. */
  private check(): Promise<void> {
    const checking = (this.checked ??= this.inner.identity().then((who) => {
      if (who.gatewayID === this.expected) return;
      throw new GatewayLinkError(
        'failed',
        `the gateway at ${this.target} is ${who.gatewayID} ('${who.name.slice(0, 64)}'), not gateway ${this.entry.name}'s ${this.expected}: its registered address leads to another gateway, so nothing was sent; register its address again (PATCH /api/v1/gateways/${this.entry.id})`,
      );
    }));
    checking.catch(() => {
      if (this.checked === checking) this.checked = undefined;
    });
    return checking;
  }

  private async whenIdentified<T>(call: () => Promise<T>): Promise<T> {
    await this.check();
    try {
      return await call();
    } catch (err) {
      // The gateway did not answer: the next call asks again who answers at the address.
      if (err instanceof GatewayLinkError && err.kind === 'unreachable') this.checked = undefined;
      throw err;
    }
  }

  identity(): Promise<LinkIdentity> {
    return this.inner.identity();
  }

  listMachines(...args: Parameters<GatewayLink['listMachines']>) {
    return this.whenIdentified(() => this.inner.listMachines(...args));
  }

  listGroups(...args: Parameters<GatewayLink['listGroups']>) {
    return this.whenIdentified(() => this.inner.listGroups(...args));
  }

  listPrograms(...args: Parameters<GatewayLink['listPrograms']>) {
    return this.whenIdentified(() => this.inner.listPrograms(...args));
  }

  uploadProgram(...args: Parameters<GatewayLink['uploadProgram']>) {
    return this.whenIdentified(() => this.inner.uploadProgram(...args));
  }

  downloadProgram(...args: Parameters<GatewayLink['downloadProgram']>) {
    return this.whenIdentified(() => this.inner.downloadProgram(...args));
  }

  currentProgram(...args: Parameters<GatewayLink['currentProgram']>) {
    return this.whenIdentified(() => this.inner.currentProgram(...args));
  }

  programCapabilities(...args: Parameters<GatewayLink['programCapabilities']>) {
    return this.whenIdentified(() => this.inner.programCapabilities(...args));
  }

  programHash(...args: Parameters<GatewayLink['programHash']>) {
    return this.whenIdentified(() => this.inner.programHash(...args));
  }

  announceFences(...args: Parameters<GatewayLink['announceFences']>) {
    return this.whenIdentified(() => this.inner.announceFences(...args));
  }

  history(...args: Parameters<GatewayLink['history']>) {
    return this.whenIdentified(() => this.inner.history(...args));
  }
}
