/**
 * The lines `npm start` prints once its roles listen: one section per role
 * (each wing's banner.ts: core/roles/<role>/banner.ts) saying what runs
 * where, and for each URL whether it needs a token, so a first-time user
 * knows which one to open in a browser and which need
 * `Authorization: Bearer <token>` first. The pieces every section uses are
 * here.
 */
import { hostname, networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

/** A URL that opens without a token. */
export const NO_TOKEN = 'no token';
/** A URL that needs `Authorization: Bearer <token>` (with security control on, the default). */
export const TOKEN = 'Bearer token';

/** URL lines: each label, URL and what it needs to open, in aligned columns. */
export function urlLines(rows: readonly (readonly [label: string, link: string, access: string])[]): string[] {
  return rows.map(([label, link, access]) => `  ${label.padEnd(13)}${link}  (${access})`);
}

/** At most this many addresses are listed beside the host name. */
const MAX_ADDRESSES = 4;

/**
 * The URLs a user on the network opens for a listener bound to every
 * address (`0.0.0.0`, or `::` which takes IPv4 too): the machine's host
 * name, then its addresses that are not loopback (IPv4 first; IPv6 for
 * `::`, link-local ones left out since they need a zone), each with the
 * listener's scheme and port. None for a listener bound to one address:
 * its own URL is the one that answers.
 */
export function networkUrls(url: string, bindHost: string, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(), host = hostname()): string[] {
  if (bindHost !== '0.0.0.0' && bindHost !== '::') return [];
  const { protocol, port } = new URL(url);
  const all = Object.values(interfaces).flatMap((list) => list ?? []).filter((a) => !a.internal);
  const v4 = all.filter((a) => a.family === 'IPv4').map((a) => a.address);
  const v6 = bindHost === '::' ? all.filter((a) => a.family === 'IPv6' && !a.address.toLowerCase().startsWith('fe80')).map((a) => `[${a.address}]`) : [];
  const names = [...new Set([...(host && host !== 'localhost' ? [host] : []), ...[...v4, ...v6].slice(0, MAX_ADDRESSES)])];
  return names.map((name) => `${protocol}//${name}${port ? `:${port}` : ''}`);
}

/** The line naming the network URLs of a role (none when it listens on one address). */
export function networkLines(urls: readonly string[]): string[] {
  return urls.length ? [`  on the network: ${urls.join(', ')}`] : [];
}

/** A role's announcements, each indented, followed by a blank line when there are any. */
export function announcementLines(announcements: readonly string[]): string[] {
  return [...announcements.map((line) => `  ${line}`), ...(announcements.length ? [''] : [])];
}

/** A console whose administrator took the shared first-start password: what it is called, its URL, the user name. */
export interface SharedPasswordLogin {
  console: string;
  url: string;
  username: string;
}

/**
 * The section printing the first-start password the roles started together
 * share, once, with the login it serves in each console; each role's own
 * section points here. Ends with a blank line.
 */
export function sharedPasswordLines(password: string, logins: readonly SharedPasswordLogin[]): string[] {
  const width = Math.max(...logins.map((l) => l.console.length)) + 2;
  return [
    `  first start:  one administrator password for ${logins.length > 1 ? 'both consoles' : 'the console'}, shown once: ${password}`,
    ...logins.map((l) => `    ${`${l.console}:`.padEnd(width)}${l.url}  user '${l.username}'`),
    '  Two separate accounts: changing the password in one console leaves the other as it is.',
    '',
  ];
}

/**
 * The banner of the roles this process runs, one section each in the order
 * given, then the notices about the config file (an old spelling it still
 * uses), ending with a newline.
 */
export function rolesBanner(sections: readonly (readonly string[])[], notices: readonly string[] = []): string {
  return ['', ...sections.flat(), ...announcementLines(notices), '  Press Ctrl-C to stop.', ''].join('\n') + '\n';
}
