/** How a message names a field of an input: `machines[3].port`, each key cut to the quoting cap. */
import { QUOTE_MAX_CHARS } from './errors.js';

/** A path key or field name cut to the quoting cap. */
export function clipKey(text: string): string {
  return text.length > QUOTE_MAX_CHARS ? `${text.slice(0, QUOTE_MAX_CHARS)}…` : text;
}

/** `machines[3].port` from ['machines', 3, 'port']. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    const name = typeof key === 'number' ? '' : clipKey(String(key));
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${name}` : name;
  }
  return out || '(root)';
}
