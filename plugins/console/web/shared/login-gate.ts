/**
 * Where calls that met a 401 wait for the person to log in again: `wait()`
 * tells the listeners a login is needed (once, however many calls wait) and
 * resolves when `open()` is called after a successful login.
 */
export interface LoginGate {
  /** Listen for "a login is needed" (true) and "logged in again" (false); answers the function that stops listening. */
  listen(listener: (needed: boolean) => void): () => void;
  wait(): Promise<void>;
  /** A login succeeded: the waiting calls go on. */
  open(): void;
  /** Tell the listeners without anyone waiting (a log-out). */
  announce(needed: boolean): void;
}

export function createLoginGate(): LoginGate {
  const listeners = new Set<(needed: boolean) => void>();
  let waiting: { promise: Promise<void>; resolve: () => void } | null = null;
  const announce = (needed: boolean) => {
    for (const l of listeners) l(needed);
  };
  return {
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    wait() {
      if (!waiting) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        waiting = { promise, resolve };
        announce(true);
      }
      return waiting.promise;
    },
    open() {
      waiting?.resolve();
      waiting = null;
      announce(false);
    },
    announce,
  };
}
