/**
 * The errors the client throws. Every one extends `SandboxDaemonError`; an aborted call
 * rejects with the signal's reason instead (an `AbortError` `DOMException` by default).
 *
 * @module
 */

import type { AgentError } from './generated/openapi.js';
import type { StandardIssue } from './standard-schema.js';
import type { Problem } from './types.js';

/** Base class of every error the client throws. */
export class SandboxDaemonError extends Error {
  override name = 'SandboxDaemonError';
}

/**
 * The daemon answered with a non-2xx status. Carries the RFC 7807 problem details
 * (`type`, `status`, `title`, `detail`, `instance`, `agentError` and any extension member
 * in `problem`). A body that is not a problem (a proxy's page, hyper's bare 400) becomes
 * a problem of type `about:blank` whose `detail` quotes the start of the body.
 */
export class ProblemError extends SandboxDaemonError {
  override name = 'ProblemError';
  /** URI naming the error kind, stable per kind, e.g. `urn:sandbox-daemon:problem:session-not-found`. */
  readonly type: string;
  /** HTTP status. */
  readonly status: number;
  /** Short summary of the kind. */
  readonly title: string;
  /** What happened this time. */
  readonly detail: string;
  /** The request path, when the daemon gives it. */
  readonly instance: string | undefined;
  /** The agent's own error, when an agent could not do what was asked. */
  readonly agentError: AgentError | undefined;
  /** The whole problem body, extension members included. */
  readonly problem: Problem;
  /** The response headers (e.g. `retry-after` on 503). */
  readonly headers: Headers;

  /** Wraps a problem body received with `headers`. */
  constructor(problem: Problem, headers: Headers = new Headers()) {
    super(`${problem.status} ${problem.title}: ${problem.detail} (${problem.type})`);
    this.type = problem.type;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.instance = problem.instance ?? undefined;
    this.agentError = problem.agentError ?? undefined;
    this.problem = problem;
    this.headers = headers;
  }

  /** The `type` suffix after `urn:sandbox-daemon:problem:` (e.g. `session-not-found`), if it has that prefix. */
  get kind(): string | undefined {
    const prefix = 'urn:sandbox-daemon:problem:';
    return this.type.startsWith(prefix) ? this.type.slice(prefix.length) : undefined;
  }
}

/** A path segment of a validation issue: an object key or an array index. */
export type IssuePath = ReadonlyArray<string | number | symbol>;

/** One validation issue with its path flattened. */
export interface ValidationIssue {
  /** What is wrong. */
  readonly message: string;
  /** Where, from the root of the validated value. */
  readonly path: IssuePath;
}

/**
 * A response body or event did not match the generated schema (only with
 * `validate`). The message names each failing field, e.g. `data.kind: Invalid option`.
 */
export class ValidationError extends SandboxDaemonError {
  override name = 'ValidationError';
  /** What was validated, e.g. `getSession response` or `event 12 of session demo`. */
  readonly target: string;
  /** The issues, each with its path. */
  readonly issues: readonly ValidationIssue[];
  /** The value that failed. */
  readonly value: unknown;

  /** Builds the error from a validator's issues. */
  constructor(target: string, issues: ReadonlyArray<StandardIssue>, value: unknown) {
    const flat = issues.map((issue) => ({ message: issue.message, path: flattenPath(issue.path) }));
    const shown = flat.slice(0, 5).map((i) => `${formatPath(i.path)}: ${i.message}`);
    if (flat.length > shown.length) shown.push(`... and ${flat.length - shown.length} more`);
    super(`${target} does not match the schema: ${shown.join('; ')}`);
    this.target = target;
    this.issues = flat;
    this.value = value;
  }

  /** The failing fields as dotted paths, e.g. `["data.kind"]`. */
  get paths(): string[] {
    return this.issues.map((i) => formatPath(i.path));
  }
}

/** The daemon broke the protocol: an unreadable body, an SSE frame that is not an event, a gap in sequences. */
export class ProtocolError extends SandboxDaemonError {
  override name = 'ProtocolError';
}

/** The daemon could not be reached (connection refused, reset, DNS, TLS...). */
export class ConnectionError extends SandboxDaemonError {
  override name = 'ConnectionError';
}

/** An event stream gave up reconnecting; `cause` is the last failure. */
export class ReconnectError extends SandboxDaemonError {
  override name = 'ReconnectError';
  /** How many reconnects were tried in a row without receiving an event. */
  readonly attempts: number;
  /** The last sequence received before giving up (resume from here). */
  readonly lastSequence: number;

  /** Describes the exhausted stream. */
  constructor(attempts: number, lastSequence: number, cause: unknown) {
    super(`event stream lost after ${attempts} reconnect attempts (last sequence ${lastSequence}): ${describe(cause)}`, {
      cause,
    });
    this.attempts = attempts;
    this.lastSequence = lastSequence;
  }
}

function flattenPath(path: StandardIssue['path']): IssuePath {
  if (!path) return [];
  return path.map((segment) => {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    return typeof key === 'symbol' || typeof key === 'number' ? key : String(key);
  });
}

/** `["data", "items", 0, "kind"]` → `data.items[0].kind`; the root is `(root)`. */
export function formatPath(path: IssuePath): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** A one-line description of any thrown value. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
