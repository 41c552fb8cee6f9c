/**
 * Where a webhook may deliver, after OWASP's SSRF guidance: http and https
 * only; public addresses only, unless the plant allows its private networks
 * (`programs.webhooks.allowPrivateNetworks`); link-local (cloud metadata at
 * 169.254.169.254), unspecified, broadcast, multicast, reserved and
 * translated addresses never. A URL with a literal address is judged when
 * the endpoint is registered; every delivery judges the addresses its host
 * name resolves to at that moment (DNS rebinding), in the lookup of the very
 * connection it opens, so what is checked is what is connected to.
 * docs/programs-webhooks.md, "Targets".
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Address ranges (ipaddr.js names) a delivery may reach only when private networks are allowed. */
const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'loopback', 'carrierGradeNat']);

/** How a refusal names a range. */
const RANGE_WORDS: Record<string, string> = {
  private: 'a private (RFC 1918)', uniqueLocal: 'a unique-local (fc00::/7)', loopback: 'a loopback', carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10)',
  linkLocal: 'a link-local', unspecified: 'an unspecified', broadcast: 'a broadcast', multicast: 'a multicast', reserved: 'a reserved',
  rfc6145: 'an IPv4-translated (::ffff:0:0:0/96)', rfc6052: 'a local-use NAT64 (64:ff9b:1::/48)', '6to4': 'a 6to4 (2002::/16)', teredo: 'a Teredo (2001::/32)',
};

/**
 * IPv4-compatible IPv6 addresses (RFC 4291, deprecated): `[::127.0.0.1]`
 * is `::7f00:1`, which the range table calls unicast; no host is reached
 * through one today, and a stack that still maps them would reach the IPv4
 * address inside, so they are never a target (`::` and `::1` are named as
 * the unspecified and loopback addresses they are).
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** The NAT64 well-known prefix (RFC 6052): an IPv6-only network reaches a public IPv4 receiver through it. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

export const SCHEMES_ACCEPTED = 'an http:// or https:// URL';
export const ALLOW_PRIVATE_SETTING = 'programs.webhooks.allowPrivateNetworks (PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS)';

/**
 * An IPv6 address with a dotted IPv4 tail in hexadecimal, as the URL parser
 * writes it: ipaddr.js reads `::127.0.0.1` as `::ffff:127.0.0.1`, the mapped
 * address, instead of the IPv4-compatible `::7f00:1` it is.
 */
function hexIPv6(address: string): string {
  return isIP(address) === 6 && address.includes('.') ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
}

/** Why `address` may not be delivered to, or undefined when it may. */
export function addressRefusal(address: string, allowPrivate: boolean): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    const literal = ipaddr.parse(hexIPv6(address));
    if (literal.kind() === 'ipv6' && (literal as ipaddr.IPv6).match(IPV4_COMPATIBLE) && !['unspecified', 'loopback'].includes(literal.range())) {
      return 'an IPv4-compatible (::/96, deprecated) address, never a webhook target';
    }
    // process(): an IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it is.
    parsed = ipaddr.process(hexIPv6(address));
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).match(NAT64)) {
    const bytes = parsed.toByteArray().slice(12);
    return addressRefusal(bytes.join('.'), allowPrivate);
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (allowPrivate && PRIVATE_RANGES.has(range)) return undefined;
  const what = `${RANGE_WORDS[range] ?? `a non-public (${range})`} address`;
  return PRIVATE_RANGES.has(range) ? `${what}; webhooks deliver to public addresses unless ${ALLOW_PRIVATE_SETTING} is set` : `${what}, never a webhook target`;
}

/** The URL's host when it is a literal IP address (brackets of IPv6 removed), else undefined. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/** Why a URL cannot be registered as a webhook target (scheme, a literal address), or undefined. */
export function targetRefusal(text: string, allowPrivate: boolean): { scheme: boolean; reason: string } | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { scheme: true, reason: `not a URL; accepted: ${SCHEMES_ACCEPTED}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { scheme: true, reason: `the scheme ${url.protocol} is not accepted; accepted: ${SCHEMES_ACCEPTED}` };
  const address = literalAddress(url);
  const why = address !== undefined ? addressRefusal(address, allowPrivate) : undefined;
  return why ? { scheme: false, reason: `${address} is ${why}` } : undefined;
}

/** A delivery refused for where it would go; its message goes to the delivery's history. */
export class TargetRefusedError extends Error {
  readonly code = 'TARGET_REFUSED';

  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/**
 * A `lookup` for the delivery agents: resolves the host name, refuses the
 * connection when any address it resolves to may not be delivered to, and
 * otherwise hands exactly those addresses to the connection.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const all: LookupAllOptions = { ...options, all: true };
    dnsLookup(hostname, all, (err, addresses: LookupAddress[]) => {
      if (err) {
        callback(err, '');
        return;
      }
      for (const { address } of addresses) {
        const why = addressRefusal(address, allowPrivate);
        if (why) {
          callback(new TargetRefusedError(`refused: ${hostname} resolves to ${address}, ${why}`), '');
          return;
        }
      }
      if (options.all) callback(null, addresses);
      else if (addresses[0]) callback(null, addresses[0].address, addresses[0].family);
      else callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '');
    });
  };
}
