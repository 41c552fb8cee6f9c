/** Bounds a driver request in time; the timer never outlives the request. */
import { GatewayError } from '../interfaces/errors.js';

/** Rejects with DRIVER_TIMEOUT when `request` has not settled within `timeoutMs`; `setting` names where the bound is configured. */
export function withTimeout<T>(request: Promise<T>, timeoutMs: number, what: string, setting: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GatewayError('DRIVER_TIMEOUT', `${what} got no answer within ${timeoutMs} ms (${setting})`)), timeoutMs);
  });
  return Promise.race([request, timeout]).finally(() => clearTimeout(timer));
}
