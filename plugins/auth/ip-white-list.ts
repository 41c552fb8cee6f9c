/**
 * The IP white list: single addresses and CIDR ranges, IPv4 and IPv6. An
 * IPv4-mapped IPv6 source (::ffff:10.0.0.5, as a dual-stack socket reports
 * IPv4 peers) is matched as the IPv4 address it carries.
 */
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses one entry; throws a message naming the entry and the accepted forms. */
export function parseWhiteListEntry(entry: string): Range {
  const text = entry.trim();
  try {
    if (text.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
      }
      return [addr, bits];
    }
    const addr = ipaddr.process(text);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    throw new Error(`'${entry}' is not an IP address or CIDR range; accepted: 10.0.0.5, 10.0.0.0/24, 2001:db8::1, 2001:db8::/32, ::ffff:10.0.0.5`);
  }
}

export class IpWhiteList {
  private readonly ranges: Range[];

  constructor(entries: readonly string[]) {
    this.ranges = entries.map(parseWhiteListEntry);
  }

  /** True when `ip` (as the socket reports it) is inside one of the ranges. */
  allows(ip: string): boolean {
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = ipaddr.process(ip);
    } catch {
      return false;
    }
    return this.ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits));
  }
}
