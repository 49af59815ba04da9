/**
 * `sandbox-daemon/webhooks` (Node, Bun, Deno: it uses `node:crypto`): checks that a webhook
 * delivery comes from the daemon. Each delivery is a `POST` whose body is a
 * `WebhookPayload`, signed in `Sandbox-Daemon-Signature`:
 * `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">`, keyed by the
 * webhook's secret; `Webhook-Id` (`<sessionId>:<sequence>`) is the same on every attempt of
 * one delivery, so a receiver can drop a repeat.
 *
 * ```ts
 * import { verifyWebhookSignature, WebhookSignatureError } from 'sandbox-daemon/webhooks';
 *
 * verifyWebhookSignature(secret, request.headers['sandbox-daemon-signature'], rawBody); // throws if forged or stale
 * const payload = JSON.parse(rawBody.toString('utf8')) as WebhookPayload;
 * ```
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SandboxDaemonError } from './errors.js';

/** The header carrying a delivery's signature. */
export const WEBHOOK_SIGNATURE_HEADER = 'Sandbox-Daemon-Signature';

/** The header carrying a delivery's id, `<sessionId>:<sequence>`, the same on every attempt. */
export const WEBHOOK_ID_HEADER = 'Webhook-Id';

/** How far (in seconds) a signature's time may be from now by default: 5 minutes. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Options of `verifyWebhookSignature`. */
export interface VerifyWebhookOptions {
  /**
   * How far the signature's `t` may be from `now`, in seconds, either way (default 300). A
   * delivery signed earlier is refused as `stale`: a replay of an old request. `Infinity`
   * accepts any time.
   */
  readonly toleranceSeconds?: number;
  /** The time to check `t` against: a `Date`, or Unix seconds (default: the clock). */
  readonly now?: Date | number;
}

/** Why a signature was refused. */
export type WebhookSignatureFailure = 'malformed' | 'mismatch' | 'stale';

/**
 * A delivery's signature was refused: `malformed` (no header, no `t`, no `v1`), `mismatch`
 * (no `v1` is the body's HMAC with this secret: another secret, or a body changed on the
 * way or re-serialised), or `stale` (genuine, but its time is further from now than the
 * tolerance). Answer such a request with a 4xx and do not act on it.
 */
export class WebhookSignatureError extends SandboxDaemonError {
  override name = 'WebhookSignatureError';
  /** Why it was refused. */
  readonly reason: WebhookSignatureFailure;
  /** The signature's time (Unix seconds), when the header had one. */
  readonly timestamp: number | undefined;

  /** Describes a refused signature. */
  constructor(reason: WebhookSignatureFailure, message: string, timestamp?: number) {
    super(message);
    this.reason = reason;
    this.timestamp = timestamp;
  }
}

/**
 * Checks a webhook delivery's `Sandbox-Daemon-Signature` header against its raw body, with
 * the webhook's secret; throws `WebhookSignatureError` when it does not hold (see its
 * `reason`), returns the signature's time (Unix seconds) when it does.
 *
 * `rawBody` must be the body exactly as received (bytes, or text decoded from them), never
 * JSON parsed and serialised again. `header` is the header's value as a server framework
 * gives it (several values are taken together). Every `v1=` of the header is tried (a
 * daemon rotating secrets may send several); the comparison takes the same time whatever
 * the bytes (`timingSafeEqual`). A `t` more than `toleranceSeconds` (default 300) from
 * `now` is refused: check the signature before acting, and drop a repeated `Webhook-Id`.
 */
export function verifyWebhookSignature(
  secret: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  rawBody: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): number {
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError('`toleranceSeconds` must be a number of seconds, 0 or more');
  }
  const now = options.now === undefined ? Date.now() / 1000 : options.now instanceof Date ? options.now.getTime() / 1000 : options.now;
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError('`now` must be a valid Date or a number of Unix seconds');
  if (typeof secret === 'string' ? secret === '' : secret.length === 0) {
    throw new TypeError('the webhook secret is empty');
  }
  const value = typeof header === 'string' ? header : Array.isArray(header) ? header.join(',') : '';
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of value.split(',')) {
    const at = item.indexOf('=');
    if (at < 0) continue;
    const name = item.slice(0, at).trim();
    const text = item.slice(at + 1).trim();
    if (name === 't') {
      if (timestamp !== undefined || !/^[0-9]{1,15}$/.test(text)) {
        throw new WebhookSignatureError('malformed', `the ${WEBHOOK_SIGNATURE_HEADER} header's \`t\` is not one number of seconds`);
      }
      timestamp = Number(text);
    } else if (name === 'v1') {
      signatures.push(text.toLowerCase());
    }
  }
  if (timestamp === undefined) {
    throw new WebhookSignatureError('malformed', `no \`t=\` in the ${WEBHOOK_SIGNATURE_HEADER} header`);
  }
  if (signatures.length === 0) {
    throw new WebhookSignatureError('malformed', `no \`v1=\` signature in the ${WEBHOOK_SIGNATURE_HEADER} header`, timestamp);
  }

  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(rawBody);
  const expected = Buffer.from(mac.digest('hex'), 'utf8');
  let matched = false;
  for (const signature of signatures) {
    const candidate = Buffer.from(signature, 'utf8');
    // Every candidate is compared (no early exit), each in constant time.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookSignatureError(
      'mismatch',
      'the webhook signature does not match the body: another secret, or a body changed (or re-serialised) on the way',
      timestamp,
    );
  }

  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookSignatureError(
      'stale',
      `the webhook was signed at ${timestamp}, ${Math.round(Math.abs(now - timestamp))} s ${now >= timestamp ? 'ago' : 'ahead'}: more than the ${tolerance} s tolerated`,
      timestamp,
    );
  }
  return timestamp;
}
