/** The program version service's section of the start-up banner (core/runtime/startup-banner.ts has the shared pieces). */
import { announcementLines, networkLines, NO_TOKEN, urlLines } from '../../runtime/startup-banner.js';

/** What the banner shows about a running program version service. */
export interface ProgramsBannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  timeZone: string;
  /** Base URL, e.g. http://localhost:8030 (no trailing slash). */
  url: string;
  /** The same listener's URLs on the network (host name, addresses) for a listener bound to every address. */
  networkUrls?: readonly string[];
  announcements: readonly string[];
  /** The database file in the data directory; `programs.db` unless told. */
  databaseFile?: string;
  /** The PostgreSQL database used instead of the file, as `postgresql://host:port/database` (never the user or password). */
  postgres?: string;
}

/** The program service's URL lines: label, URL and what it needs to open. */
export function programsUrlLines(url: string): string[] {
  return urlLines([
    ['console:', `${url}/`, `${NO_TOKEN}; programs, approvals, deployments, drift, audit; log in there`],
    ['terminal:', `${url}/terminal`, `${NO_TOKEN}; the shop-floor terminal, log in there`],
    ['API:', `${url}/api/v1`, 'session cookie or Bearer token'],
    ['API docs:', `${url}/api/docs`, NO_TOKEN],
    ['OpenAPI:', `${url}/openapi/v1.json`, NO_TOKEN],
  ]);
}

/** The program version service's section of the banner; ends with a blank line. */
export function programsBannerSection(facts: ProgramsBannerFacts): string[] {
  return [
    `  Program version service ${facts.version} is running`,
    `  config:      ${facts.configFile}`,
    ...(facts.postgres
      ? [`  data:        ${facts.dataDir}`, `  database:    PostgreSQL ${facts.postgres}`]
      : [`  data:        ${facts.dataDir} (SQLite: ${facts.databaseFile ?? 'programs.db'})`]),
    `  time zone:   ${facts.timeZone}`,
    '',
    ...programsUrlLines(facts.url),
    ...networkLines(facts.networkUrls ?? []),
    '',
    ...announcementLines(facts.announcements),
  ];
}
