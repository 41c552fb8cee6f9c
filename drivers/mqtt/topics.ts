/**
 * Topic filters and payload paths: the `{machineID}` placeholder, MQTT
 * wildcard matching (`+` one level, `#` the rest), and the dotted path that
 * picks a value out of a JSON payload (`feed.actual`, `axes[0].load`).
 */

/** Placeholders a topic filter may contain. */
export const TOPIC_PLACEHOLDERS = ['{machineID}'] as const;

/** Why `filter` is not a valid MQTT topic filter (after placeholders), or undefined when it is. */
export function topicFilterProblem(filter: string): string | undefined {
  if (filter.length === 0) return 'must not be empty';
  const unknown = /\{[^}]*\}/.exec(filter.replaceAll('{machineID}', ''));
  if (unknown) return `has unknown placeholder ${unknown[0]}; accepted: ${TOPIC_PLACEHOLDERS.join(', ')}`;
  const levels = filter.split('/');
  for (const [i, level] of levels.entries()) {
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return "may use '#' only as the whole last level";
    if (level.includes('+') && level !== '+') return "may use '+' only as a whole level";
  }
  return undefined;
}

/** The filter a machine subscribes to: placeholders replaced by the machine's values. */
export function resolveTopic(pattern: string, machineID: string): string {
  return pattern.replaceAll('{machineID}', machineID);
}

/** Whether `topic` (a concrete topic name) matches the subscription `filter`. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  // Wildcards at the first level do not match system topics ($SYS/…), as in the MQTT specification.
  if (topic.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    const level = f[i];
    if (level === '#') return true;
    if (i >= t.length) return false;
    if (level !== '+' && level !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Splits `a.b[2].c` into ['a', 'b', 2, 'c']; '' and '$' are the whole payload. */
export function parsePath(path: string): Array<string | number> {
  const trimmed = path.trim().replace(/^\$\.?/, '');
  if (trimmed === '') return [];
  const keys: Array<string | number> = [];
  for (const part of trimmed.split('.')) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) {
      keys.push(part);
      continue;
    }
    if (match[1]) keys.push(match[1]);
    for (const index of (match[2] ?? '').matchAll(/\[(\d+)\]/g)) keys.push(Number(index[1]));
  }
  return keys;
}

/** The value at `path` inside a parsed JSON payload, or undefined when there is none. */
export function valueAtPath(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    if (Array.isArray(value)) {
      const index = typeof key === 'number' ? key : /^\d+$/.test(key) ? Number(key) : NaN;
      value = Number.isInteger(index) ? value[index] : undefined;
    } else {
      value = (value as Record<string, unknown>)[String(key)];
    }
  }
  return value;
}
