/**
 * The lines `npm start` prints once the gateway listens: what runs where, and
 * for each URL whether it needs a token, so a first-time user knows which one
 * to open in a browser and which need `Authorization: Bearer <token>` first.
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
}

const NO_TOKEN = 'no token';
const TOKEN = 'Bearer token';

/** The URL lines: label, URL and whether it needs a token (with security control on, the default). */
export function bannerUrlLines(url: string): string[] {
  const rows: [string, string, string][] = [
    ['start page:', `${url}/`, `${NO_TOKEN}; redirects to the API reference`],
    ['API docs:', `${url}/api/docs`, NO_TOKEN],
    ['health:', `${url}/api/health`, NO_TOKEN],
    ['machines:', `${url}/api/config/machines`, TOKEN],
    ['fleet state:', `${url}/api/task/batchReadTaskData?type=CNCStatus`, TOKEN],
    ['errors:', `${url}/api/task/batchReadErrors`, TOKEN],
    ['MCP:', `${url}/mcp`, `${TOKEN}; Streamable HTTP`],
  ];
  return rows.map(([label, link, access]) => `  ${label.padEnd(13)}${link}  (${access})`);
}

/** The whole banner, ending with a newline. */
export function startupBanner(facts: BannerFacts): string {
  return (
    [
      '',
      `  CNC machine gateway ${facts.version} is running`,
      `  config:      ${facts.configFile}`,
      `  data:        ${facts.dataDir} (SQLite: gateway.db)`,
      `  time zone:   ${facts.timeZone}`,
      `  machines:    ${facts.machines.length} (${driversInUse(facts.machines)})`,
      '',
      ...bannerUrlLines(facts.url),
      '',
      ...facts.announcements.map((line) => `  ${line}`),
      ...(facts.announcements.length ? [''] : []),
      '  Press Ctrl-C to stop.',
      '',
    ].join('\n') + '\n'
  );
}

/** `simulator 12` or `opcua 2, modbus 2`: how many machines use each driver. */
function driversInUse(machines: readonly { driver: string }[]): string {
  const counts = new Map<string, number>();
  for (const m of machines) counts.set(m.driver, (counts.get(m.driver) ?? 0) + 1);
  return [...counts].map(([driver, n]) => `${driver} ${n}`).join(', ') || 'none';
}
