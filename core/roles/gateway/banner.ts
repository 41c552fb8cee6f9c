/** The gateway's section of the start-up banner (core/runtime/startup-banner.ts has the shared pieces). */
import { announcementLines, networkLines, NO_TOKEN, rolesBanner, TOKEN, urlLines } from '../../runtime/startup-banner.js';

/** What the banner shows about a running gateway. */
export interface BannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  timeZone: string;
  machines: readonly { driver: string }[];
  /** Base URL, e.g. http://localhost:8080 (no trailing slash). */
  url: string;
  /** The same listener's URLs on the network (host name, addresses) for a listener bound to every address. */
  networkUrls?: readonly string[];
  /** Lines the plugins asked to show (first password, how to log in). */
  announcements: readonly string[];
  /** The database file in the data directory; `gateway.db` unless told. */
  databaseFile?: string;
  /** The MTConnect agent's base URL, when it runs (its own listener). */
  mtconnectUrl?: string | undefined;
}

/** The URL lines: label, URL and whether it needs a token (with security control on, the default). */
export function bannerUrlLines(url: string, mtconnectUrl?: string): string[] {
  return urlLines([
    ['console:', `${url}/`, `${NO_TOKEN}; the fleet console, log in there`],
    ['API docs:', `${url}/api/docs`, NO_TOKEN],
    ['health:', `${url}/api/health`, NO_TOKEN],
    ['machines:', `${url}/api/config/machines`, TOKEN],
    ['fleet state:', `${url}/api/task/batchReadTaskData?type=CNCStatus`, TOKEN],
    ['errors:', `${url}/api/task/batchReadErrors`, TOKEN],
    ['MCP:', `${url}/mcp`, `${TOKEN}; Streamable HTTP`],
    ...(mtconnectUrl ? [['MTConnect:', `${mtconnectUrl}/probe`, `${NO_TOKEN}; read-only, for MTConnect clients (/current, /sample)`] as const] : []),
  ]);
}

/** The gateway's section of the banner: where it runs, its URLs, its announcements; ends with a blank line. */
export function gatewayBannerSection(facts: BannerFacts): string[] {
  return [
    `  CNC machine gateway ${facts.version} is running`,
    `  config:      ${facts.configFile}`,
    `  data:        ${facts.dataDir} (SQLite: ${facts.databaseFile ?? 'gateway.db'})`,
    `  time zone:   ${facts.timeZone}`,
    `  machines:    ${facts.machines.length} (${driversInUse(facts.machines)})`,
    '',
    ...bannerUrlLines(facts.url, facts.mtconnectUrl),
    ...networkLines(facts.networkUrls ?? []),
    '',
    ...announcementLines(facts.announcements),
  ];
}

/** The banner of a process that runs the gateway alone, ending with a newline. */
export function startupBanner(facts: BannerFacts): string {
  return rolesBanner([gatewayBannerSection(facts)]);
}

/** `simulator 12` or `opcua 2, modbus 2`: how many machines use each driver. */
function driversInUse(machines: readonly { driver: string }[]): string {
  const counts = new Map<string, number>();
  for (const m of machines) counts.set(m.driver, (counts.get(m.driver) ?? 0) + 1);
  return [...counts].map(([driver, n]) => `${driver} ${n}`).join(', ') || 'none';
}
