/**
 * Reconnect policy of event streams: exponential backoff with jitter, bounded retries.
 *
 * @module
 */

/** How an event stream reconnects after losing its connection. */
export interface ReconnectOptions {
  /** Reconnect attempts in a row without receiving an event before giving up (default 8). */
  readonly retries?: number;
  /** Delay before the first reconnect, in ms (default 250; an SSE `retry:` field replaces it). */
  readonly initialDelayMs?: number;
  /** Longest delay between attempts, in ms (default 5000). */
  readonly maxDelayMs?: number;
  /**
   * Reconnect when nothing (not even a keep-alive comment) arrived for this long, in ms
   * (default 60000, four times the daemon's default keep-alive interval; 0 disables).
   */
  readonly idleTimeoutMs?: number;
}

/** `ReconnectOptions` with every default applied. */
export type ReconnectPolicy = Required<ReconnectOptions>;

/** The defaults of `ReconnectOptions`. */
export const defaultReconnect: ReconnectPolicy = {
  retries: 8,
  initialDelayMs: 250,
  maxDelayMs: 5000,
  idleTimeoutMs: 60_000,
};

/** Applies the defaults; `false` means "never reconnect". */
export function reconnectPolicy(...layers: ReadonlyArray<ReconnectOptions | false | undefined>): ReconnectPolicy {
  let policy: ReconnectPolicy = { ...defaultReconnect };
  for (const layer of layers) {
    if (layer === false) policy = { ...policy, retries: 0 };
    else if (layer) policy = { ...policy, ...definedOnly(layer) };
  }
  return policy;
}

/** The delay before reconnect attempt `attempt` (1-based): doubling, capped, with jitter in [d/2, d]. */
export function backoffDelay(attempt: number, policy: ReconnectPolicy, random: () => number = Math.random): number {
  const exponential = policy.initialDelayMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  return Math.round(capped / 2 + (random() * capped) / 2);
}

function definedOnly(options: ReconnectOptions): ReconnectOptions {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(options)) {
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) out[key] = value;
  }
  return out;
}
