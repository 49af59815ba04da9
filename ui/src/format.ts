/** Small formatting helpers for the screens. */

/** "3 s ago", "5 min ago", "2 h ago", or the date. */
export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(then).toLocaleString();
}

/** "1.4 MiB" and the like. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** JSON for people: two-space indent, strings as they are. */
export function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A fresh session id: `s-` and 8 random base-36 characters. */
export function newSessionId(): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `s-${Array.from(random, (n) => n.toString(36).padStart(7, '0').slice(-4)).join('')}`;
}
