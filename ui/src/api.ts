/**
 * The daemon the inspector talks to: the same origin that served the page, through the
 * TypeScript SDK's dependency-free client (`sandbox-daemon/inline`), so every call and
 * stream is the SDK's, typed from the OpenAPI document. The token is kept in this tab's
 * `sessionStorage` only: never in a URL, a cookie or `localStorage`.
 */

import { ProblemError, SandboxDaemon, SandboxDaemonError } from '../../sdks/typescript/src/inline.js';

export type * from '../../sdks/typescript/src/inline.js';
export { ProblemError, SandboxDaemon };

const TOKEN_KEY = 'sandbox-daemon.token';

/**
 * Where the app is mounted (`/ui`, or `/prefix/ui` behind a proxy that adds a prefix) and
 * where the API is (the same prefix, without `/ui`).
 */
export function mount(pathname: string = location.pathname): { base: string; apiPrefix: string } {
  const at = pathname.indexOf('/ui');
  const prefix = at >= 0 ? pathname.slice(0, at) : '';
  return { base: `${prefix}/ui`, apiPrefix: prefix };
}

/** The token this tab was given, if any. */
export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Keeps (or, with `undefined`, forgets) the token for this tab. */
export function storeToken(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode quota): the token lives as long as the page.
  }
}

/** A client of the daemon that served this page. */
export function connect(token: string | undefined): SandboxDaemon {
  return new SandboxDaemon({ baseUrl: location.origin + mount().apiPrefix, token });
}

/** Whether an error means the token is missing or wrong. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof ProblemError && error.status === 401;
}

/** Whether an error is an abort of ours (navigation, unmount), not a failure to show. */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** A one-line description of an error for the user: a problem's title and detail. */
export function describe(error: unknown): string {
  if (error instanceof ProblemError) {
    const agent = error.agentError ? ` (${error.agentError.message})` : '';
    return `${error.title}: ${error.detail}${agent}`;
  }
  if (error instanceof SandboxDaemonError || error instanceof Error) return error.message;
  return String(error);
}
