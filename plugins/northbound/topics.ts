/**
 * The topics a target publishes on, and the rules a topic root must keep.
 * UNS: `{topicRoot}/{machineID}/{class}`, `{topicRoot}/{machineID}/state`
 * and `{topicRoot}/_gateway/status`. Sparkplug B: `spBv1.0/{group_id}/
 * {NBIRTH|NDEATH|NCMD}/{edge_node_id}` and `spBv1.0/{group_id}/{DBIRTH|
 * DDATA|DDEATH}/{edge_node_id}/{machineID}`. A machineID is always a
 * safe topic level (letters, digits, `_ . -`); a class from the history is
 * made one (anything else becomes `_`).
 */

/** The Sparkplug B namespace, the first level of every Sparkplug topic. */
export const SPARKPLUG_NAMESPACE = 'spBv1.0';

/** The level under the UNS root where the gateway's own status lives (a machineID cannot start with `_`). */
export const GATEWAY_LEVEL = '_gateway';

/** Longest topic root accepted. */
export const TOPIC_ROOT_MAX = 512;

/** Why `root` cannot be a UNS topic root (several levels allowed), or undefined when it can. */
export function unsRootProblem(root: string): string | undefined {
  return levelProblem(root, true) ?? (root.split('/')[0] === SPARKPLUG_NAMESPACE ? `starts with '${SPARKPLUG_NAMESPACE}', the Sparkplug B namespace; use format "sparkplug" for Sparkplug` : undefined);
}

/** Why `id` cannot be a Sparkplug group_id or edge_node_id (one level), or undefined when it can. */
export function sparkplugIdProblem(id: string): string | undefined {
  return levelProblem(id, false);
}

function levelProblem(text: string, levels: boolean): string | undefined {
  if (text.length === 0) return 'is empty';
  if (text.length > TOPIC_ROOT_MAX) return `is ${text.length} characters long; at most ${TOPIC_ROOT_MAX}`;
  if (text.includes('+') || text.includes('#')) return "has '+' or '#', which are MQTT wildcards and cannot be published to";
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) return 'has a control character';
  if (text.startsWith('$')) return "starts with '$', which brokers keep for themselves ($SYS)";
  if (!levels && text.includes('/')) return "has '/'; a Sparkplug id is one topic level";
  if (text.split('/').some((level) => level.length === 0)) return "has an empty level (a leading, trailing or doubled '/')";
  return undefined;
}

/** A history class as one topic level (or metric folder): letters, digits, `_ . -` kept, anything else `_`. */
export function classLevel(cls: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(cls) ? cls : cls.slice(0, 64).replace(/[^A-Za-z0-9_.-]/g, '_') || '_';
}

/** UNS topics under a root. */
export const unsTopics = (root: string) => ({
  row: (machineID: string, cls: string) => `${root}/${machineID}/${classLevel(cls)}`,
  state: (machineID: string) => `${root}/${machineID}/state`,
  gatewayStatus: () => `${root}/${GATEWAY_LEVEL}/status`,
});

/** Sparkplug B message types. */
export type SparkplugMessageType = 'NBIRTH' | 'NDEATH' | 'NDATA' | 'NCMD' | 'DBIRTH' | 'DDEATH' | 'DDATA' | 'DCMD';

/** Sparkplug topics of one edge node. */
export const sparkplugTopics = (groupId: string, edgeNodeId: string) => ({
  node: (type: SparkplugMessageType) => `${SPARKPLUG_NAMESPACE}/${groupId}/${type}/${edgeNodeId}`,
  device: (type: SparkplugMessageType, machineID: string) => `${SPARKPLUG_NAMESPACE}/${groupId}/${type}/${edgeNodeId}/${machineID}`,
});

/** A client id made of a name: letters, digits, `_` and `-`, at most 64 characters. */
export function clientIdOf(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64);
}
