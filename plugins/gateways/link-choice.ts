/**
 * Which link reaches a gateway from this instance: a remote gateway over
 * HTTP with its sealed key; the gateway in this process (its own entry) in
 * the process; the gateway in another instance's process only over HTTP, at
 * the address registered for it and after it says it is that gateway
 * (identified-link.ts), or not at all until one is registered — never
 * through this process's own gateway, whose machines are others with the
 * same names. docs/programs-fleet.md, "The gateway in each instance".
 */
import { HttpGatewayLink } from '../../core/gateway-link/http.js';
import { GatewayLinkError, type GatewayLink } from '../../core/gateway-link/types.js';
import type { CredentialBox, SealedCredential } from '../../core/store/credential-box.js';
import { IdentifiedLink } from './identified-link.js';
import type { GatewayRecord } from './store.js';

/** The gateway in this process, when it runs one: its entry and its link. */
export interface LocalGateway {
  entryId: string;
  link: GatewayLink;
}

/** Whether an entry of another instance's gateway has an address the other instances may use. */
export const hasAddress = (g: Pick<GatewayRecord, 'url' | 'sealedKey'>): boolean => g.sealedKey !== null && /^https?:\/\//.test(g.url);

/** How this instance reaches a gateway: `remote` over HTTP, `local` in this process, `peer` another instance's over HTTP at its address, `none` not now. */
export function wayTo(g: GatewayRecord, local: Pick<LocalGateway, 'entryId'> | undefined): 'remote' | 'local' | 'peer' | 'none' {
  if (g.kind === 'http') return 'remote';
  if (local && g.id === local.entryId) return 'local';
  return g.gatewayUid !== null && hasAddress(g) ? 'peer' : 'none';
}

/** Why this instance cannot reach the gateway in another instance's process, and what to do; the work waits meanwhile. */
function unaddressed(g: GatewayRecord, now: number): GatewayLinkError {
  if (g.gatewayUid === null) {
    return new GatewayLinkError('unreachable', `gateway ${g.name} was the gateway in an instance's process before each gateway had an entry of its own, and no instance's gateway has taken it over since (programs.adoptGateway): it cannot be reached until one does`);
  }
  const where = `the instance on ${g.host ?? 'another host'}${g.servedUntil !== null && g.servedUntil > now ? '' : ', which is not running now'}`;
  return new GatewayLinkError(
    'unreachable',
    `gateway ${g.name} runs in the process of ${where}; other instances reach it only at an address registered for it, and none is (PATCH /api/v1/gateways/${g.id} with its url and a secretKey), so work on its machines waits for it`,
  );
}

/** The link chooser of this instance: one link per entry of another instance's gateway, kept while its address and key stay the same. */
export function linkChooser(box: CredentialBox, local: LocalGateway | undefined, now: () => number): (g: GatewayRecord) => GatewayLink {
  const peers = new Map<string, { url: string; sealedKey: string; link: GatewayLink }>();
  const keyOf = (g: GatewayRecord) => box.open(`gateway:${g.id}`, 'secretKey', JSON.parse(g.sealedKey ?? 'null') as SealedCredential);
  return (g) => {
    const way = wayTo(g, local);
    if (way === 'remote') return new HttpGatewayLink(g.url, keyOf(g));
    if (way === 'local' && local) return local.link;
    if (way === 'none' || g.gatewayUid === null) throw unaddressed(g, now());
    const known = peers.get(g.id);
    if (known && known.url === g.url && known.sealedKey === g.sealedKey) return known.link;
    const link = new IdentifiedLink(new HttpGatewayLink(g.url, keyOf(g)), g.gatewayUid, { id: g.id, name: g.name });
    peers.set(g.id, { url: g.url, sealedKey: g.sealedKey ?? '', link });
    return link;
  };
}
