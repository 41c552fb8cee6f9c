/** The cloud relay's section of the start-up banner (core/runtime/startup-banner.ts has the shared pieces). */
import { announcementLines, networkLines } from '../../runtime/startup-banner.js';

export interface CloudBannerFacts {
  version: string;
  configFile: string;
  dataDir: string;
  url: string;
  brokerUrl: string;
  embedded: boolean;
  /** Gateway tokens that are valid. */
  tokens: number;
  /** Where the tokens live: undefined for cloud.db, else the PostgreSQL server and database (without credentials). */
  sharedTokens?: string | undefined;
  /** The listener's URLs on the network (host name, addresses) for a listener bound to every address. */
  networkUrls?: readonly string[];
  /** Lines to show once (a metrics token made at this start); never logged. */
  announcements?: readonly string[];
}

/** The cloud relay's section of the banner; ends with a blank line. */
export function cloudBannerSection(facts: CloudBannerFacts): string[] {
  return [
    `  Cloud relay ${facts.version} is running`,
    `  config:      ${facts.configFile}`,
    `  data:        ${facts.dataDir}${facts.sharedTokens ? '' : ' (SQLite: cloud.db)'}`,
    ...(facts.sharedTokens ? [`  tokens:      ${facts.sharedTokens} (PostgreSQL, shared with the other cloud instances)`] : []),
    '',
    `  MCP:         ${facts.url}/mcp  (accessToken header: a gateway token)`,
    `  broker:      ${facts.brokerUrl}  (${facts.embedded ? 'embedded; ' : ''}gateways dial out to it)`,
    `  gateways:    ${facts.tokens} token(s); npm run cloud-token -- create <name> makes one`,
    ...networkLines(facts.networkUrls ?? []),
    '',
    ...announcementLines(facts.announcements ?? []),
  ];
}
