/**
 * Small helpers around `AbortSignal` that work wherever `AbortController` does (no
 * `AbortSignal.any`, which older browsers lack).
 *
 * @module
 */

/** A signal that aborts when any of the given signals does, or when `abort` is called. */
export interface LinkedSignal {
  /** The combined signal. */
  readonly signal: AbortSignal;
  /** Aborts the combined signal (not the inputs). */
  abort(reason?: unknown): void;
  /** Stops listening to the inputs; call once the signal is no longer needed. */
  dispose(): void;
}

/** Links any number of optional signals into one. */
export function linkSignals(...signals: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  const cleanups: Array<() => void> = [];
  for (const input of signals) {
    if (!input) continue;
    if (input.aborted) {
      controller.abort(input.reason);
      break;
    }
    const onAbort = (): void => controller.abort(input.reason);
    input.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => input.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    abort: (reason?: unknown) => controller.abort(reason),
    dispose: () => {
      for (const cleanup of cleanups.splice(0)) cleanup();
    },
  };
}

/** Throws the signal's reason when it has been aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** The reason an aborted signal carries (an `AbortError` when none was given). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Resolves after `ms` milliseconds; rejects with the signal's reason if it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
