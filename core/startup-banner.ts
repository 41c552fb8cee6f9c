/**
 * The lines `npm start` prints once its roles listen: one section per role
 * (the gateway, the program version service) saying what runs where, and for
 * each URL whether it needs a token, so a first-time user knows which one to
 * open in a browser and which need `Authorization: Bearer <token>` first.
 */

/** What the banner shows about a running gateway. */
export interface BannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  timeZone: string;
  machines: readonly { driver: string }[];
  /** Base URL, e.g. http://localhost:8080 (no trailing slash). */
  url: string;
  /** Lines the plugins asked to show (first password, how to log in). */
  announcements: readonly string[];
  /** The database file in the data directory; `gateway.db` unless told. */
  databaseFile?: string;
}

/** What the banner shows about a running program version service. */
export interface ProgramsBannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  timeZone: string;
  /** Base URL, e.g. http://localhost:8030 (no trailing slash). */
  url: string;
  announcements: readonly string[];
  /** The database file in the data directory; `programs.db` unless told. */
  databaseFile?: string;
}

const NO_TOKEN = 'no token';
const TOKEN = 'Bearer token';

/** The URL lines: label, URL and whether it needs a token (with security control on, the default). */
export function bannerUrlLines(url: string): string[] {
  const rows: [string, string, string][] = [
    ['console:', `${url}/`, `${NO_TOKEN}; the fleet dashboard, log in there`],
    ['API docs:', `${url}/api/docs`, NO_TOKEN],
    ['health:', `${url}/api/health`, NO_TOKEN],
    ['machines:', `${url}/api/config/machines`, TOKEN],
    ['fleet state:', `${url}/api/task/batchReadTaskData?type=CNCStatus`, TOKEN],
    ['errors:', `${url}/api/task/batchReadErrors`, TOKEN],
    ['MCP:', `${url}/mcp`, `${TOKEN}; Streamable HTTP`],
  ];
  return rows.map(([label, link, access]) => `  ${label.padEnd(13)}${link}  (${access})`);
}

/** The program service's URL lines, as bannerUrlLines. */
export function programsUrlLines(url: string): string[] {
  const rows: [string, string, string][] = [
    ['console:', `${url}/`, `${NO_TOKEN}; programs, approvals, deployments, drift, audit; log in there`],
    ['terminal:', `${url}/terminal`, `${NO_TOKEN}; the shop-floor terminal, log in there`],
    ['API:', `${url}/api/v1`, 'session cookie or Bearer token'],
    ['API docs:', `${url}/api/docs`, NO_TOKEN],
    ['OpenAPI:', `${url}/openapi/v1.json`, NO_TOKEN],
  ];
  return rows.map(([label, link, access]) => `  ${label.padEnd(13)}${link}  (${access})`);
}

/** A role's announcements, each indented, followed by a blank line when there are any. */
function announcementLines(announcements: readonly string[]): string[] {
  return [...announcements.map((line) => `  ${line}`), ...(announcements.length ? [''] : [])];
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
    ...bannerUrlLines(facts.url),
    '',
    ...announcementLines(facts.announcements),
  ];
}

/** The program version service's section of the banner; ends with a blank line. */
export function programsBannerSection(facts: ProgramsBannerFacts): string[] {
  return [
    `  Program version service ${facts.version} is running`,
    `  config:      ${facts.configFile}`,
    `  data:        ${facts.dataDir} (SQLite: ${facts.databaseFile ?? 'programs.db'})`,
    `  time zone:   ${facts.timeZone}`,
    '',
    ...programsUrlLines(facts.url),
    '',
    ...announcementLines(facts.announcements),
  ];
}

export interface CloudBannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  url: string;
  brokerUrl: string;
  embedded: boolean;
  /** Gateway tokens that are valid. */
  tokens: number;
}

export function cloudBannerSection(facts: CloudBannerFacts): string[] {
  return [
    `  Cloud relay ${facts.version} is running`,
    `  config:      ${facts.configFile}`,
    `  data:        ${facts.dataDir} (SQLite: cloud.db)`,
    '',
    `  MCP:         ${facts.url}/mcp  (accessToken header: a gateway token)`,
    `  broker:      ${facts.brokerUrl}  (${facts.embedded ? 'embedded; ' : ''}gateways dial out to it)`,
    `  gateways:    ${facts.tokens} token(s); npm run cloud-token -- create <name> makes one`,
    '',
  ];
}

/** The banner of the roles this process runs, one section each in the order given, ending with a newline. */
export function rolesBanner(sections: readonly (readonly string[])[]): string {
  return ['', ...sections.flat(), '  Press Ctrl-C to stop.', ''].join('\n') + '\n';
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
