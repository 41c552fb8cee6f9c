/**
 * Polling that never overlaps itself and rests while the page is hidden:
 * `load` runs, then again `everyMs` after it ended.
 */
import { useEffect, useRef } from 'preact/hooks';

export function usePoll(load: () => Promise<void>, everyMs: number, deps: unknown[] = []): void {
  const current = useRef(load);
  current.current = load;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const tick = async () => {
      if (stopped) return;
      if (!document.hidden) {
        try {
          await current.current();
        } catch {
          // The view shows its own error state; polling goes on.
        }
      }
      if (!stopped) timer = setTimeout(() => void tick(), everyMs);
    };
    void tick();
    const onVisible = () => {
      if (!document.hidden && timer !== undefined) {
        clearTimeout(timer);
        void tick();
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, deps);
}
