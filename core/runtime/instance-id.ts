/**
 * An id for this process among the instances of a role sharing one database:
 * `host:pid:random`, new at each start, so an operator can tell the instance
 * and a restarted one is another. Work that instances claim (deployments,
 * mirror reads) is marked with it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newInstanceId(): string {
  return `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
