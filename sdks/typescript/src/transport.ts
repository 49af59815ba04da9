/**
 * One HTTP exchange with the daemon on `fetch`: URL building, auth, problem details,
 * JSON decoding and optional validation. Used by the client; not exported.
 *
 * @module
 */

import { abortReason, linkSignals } from './abort.js';
import { ConnectionError, ProblemError, ProtocolError, ValidationError, describe } from './errors.js';
import type { Route } from './generated/routes.js';
import type { StreamFrames } from './generated/streams.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { OperationId, Problem } from './types.js';

/** Validators the client applies to what it receives (see `validate`). */
export interface Validators {
  /** The success body of each operation, by operationId (`null` or absent: not checked). */
  readonly responses?: { readonly [K in OperationId]?: StandardSchemaV1 | null };
  /** Each event of an event stream. */
  readonly event?: StandardSchemaV1;
  /** Problem bodies of non-2xx answers. */
  readonly problem?: StandardSchemaV1;
  /**
   * Each decoded frame (`{ event, data }`) of a stream whose frames are tagged by `event`
   * (the install progress of `installAgentProgress`, a log of `followProcessLogs`), by
   * operationId.
   */
  readonly frames?: { readonly [K in keyof StreamFrames | 'processLogs']?: StandardSchemaV1 | null };
}

/** Options every call accepts. */
export interface RequestOptions {
  /** Aborts this call (the client's own `signal` aborts every call). */
  readonly signal?: AbortSignal | undefined;
  /** Extra request headers for this call. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Settings of a transport. */
export interface TransportConfig {
  /** The daemon's base URL. */
  readonly baseUrl: string | URL;
  /** Bearer token, if any. */
  readonly token?: string | undefined;
  /** The fetch to use (default: the global one, looked up at each call). */
  readonly fetch?: typeof globalThis.fetch | undefined;
  /** Aborts every call. */
  readonly signal?: AbortSignal | undefined;
  /** Headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Validators to apply, if any. */
  readonly validators?: Validators | undefined;
}

/** What one request sends. */
export interface Call {
  /** operationId, for messages and validation. */
  readonly op: OperationId;
  /** Method and path template. */
  readonly route: Route;
  /** Path parameters. */
  readonly params?: Readonly<Record<string, string>>;
  /** Query parameters (`undefined` ones are left out). */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** JSON body (POST; `{}` when absent). */
  readonly body?: unknown;
  /**
   * A body sent as it is (wins over `body`): JSON text or bytes, or with `contentType`
   * any content (a file's bytes, a tar archive), also as a `Blob` or a stream.
   */
  readonly rawBody?: RawBody;
  /** `Content-Type` of the body (default `application/json`). */
  readonly contentType?: string;
  /** `Accept` header (default: JSON or problem JSON). */
  readonly accept?: string;
  /** Extra headers for this call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts this call (`json` links it with the client's signal). */
  readonly signal?: AbortSignal | undefined;
}

/** A body sent as it is: text (sent as UTF-8), bytes, a `Blob`, or a stream of bytes. */
export type RawBody = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/** A successful answer whose body was read as bytes. */
export interface BytesResponse {
  /** The status (200, 206, ...). */
  readonly status: number;
  /** The response headers. */
  readonly headers: Headers;
  /** The body. */
  readonly bytes: Uint8Array;
}

const JSON_ACCEPT = 'application/json, application/problem+json';

/** Sends requests to one daemon. */
export class Transport {
  /** The daemon's base URL, always ending with `/`. */
  readonly baseUrl: URL;
  readonly #token: string | undefined;
  readonly #fetch: typeof globalThis.fetch;
  readonly #headers: Readonly<Record<string, string>>;
  /** The client-wide signal. */
  readonly signal: AbortSignal | undefined;
  /** The validators in force, if any. */
  readonly validators: Validators | undefined;

  /** A transport to the daemon at `config.baseUrl`. */
  constructor(config: TransportConfig) {
    const base = new URL(config.baseUrl);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    base.search = '';
    base.hash = '';
    this.baseUrl = base;
    this.#token = config.token;
    if (config.fetch === undefined && typeof globalThis.fetch !== 'function') {
      throw new TypeError('this runtime has no global fetch: pass `fetch` in the options');
    }
    // Late-bound so a fetch installed (or mocked) after construction is the one used.
    this.#fetch = config.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#headers = config.headers ?? {};
    this.signal = config.signal;
    this.validators = config.validators;
  }

  /** The absolute URL of a route with its parameters and query. */
  url(route: Route, params: Readonly<Record<string, string>> = {}, query: Call['query'] = {}): URL {
    const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new TypeError(`missing path parameter \`${name}\``);
      return encodeURIComponent(value);
    });
    const url = new URL(path.slice(1), this.baseUrl);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /**
   * Sends a call; resolves with the 2xx response (body unread). A non-2xx answer rejects
   * with `ProblemError`, a network failure with `ConnectionError`, an abort with the
   * signal's reason. `signal` governs the request and the body: the caller links it to the
   * client's signal (see `json`) and keeps it alive while it reads the body.
   */
  async send(call: Call, signal: AbortSignal): Promise<Response> {
    const url = this.url(call.route, call.params, call.query);
    const headers = new Headers(this.#headers);
    headers.set('accept', call.accept ?? JSON_ACCEPT);
    if (this.#token !== undefined) headers.set('authorization', `Bearer ${this.#token}`);
    let body: RawBody | undefined;
    if (call.route.method !== 'GET' && call.route.method !== 'DELETE') {
      body = call.rawBody ?? JSON.stringify(call.body ?? {});
      headers.set('content-type', call.contentType ?? 'application/json');
    }
    for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
    // A stream is sent as it is read (fetch asks for `duplex: 'half'` to take one).
    const init: RequestInit & { duplex?: 'half' } = {
      method: call.route.method,
      headers,
      ...(body === undefined ? {} : { body: body as BodyInit }),
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      signal,
    };

    let response: Response;
    try {
      response = await this.#fetch(url, init);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      throw new ConnectionError(`${call.route.method} ${url.pathname}: ${describe(error)}`, { cause: error });
    }
    if (!response.ok) throw await this.problem(response);
    return response;
  }

  /** Sends a call and decodes its JSON success body (validated when validators are set). */
  async json<T>(call: Call): Promise<T> {
    return (await this.jsonText<T>(call, true)).value;
  }

  /**
   * Sends a call and returns its JSON success body both as the exact text received and
   * parsed (validated when validators are set): for documents whose bytes matter (a
   * session bundle's checksum covers its events' text). A 204 answers `''` and `undefined`.
   * `value` is the validator's output with `validated`, else the text as parsed (members in
   * the text's order, as checksums over re-serialised parts expect).
   */
  async jsonText<T>(call: Call, validated = false): Promise<{ text: string; value: T }> {
    const linked = linkSignals(this.signal, call.signal);
    try {
      const response = await this.send(call, linked.signal);
      if (response.status === 204) {
        await response.body?.cancel();
        return { text: '', value: undefined as T };
      }
      const what = `${call.op} response`;
      const text = await read(response, what, linked.signal, 'text');
      const value = parseJson(text, what);
      const schema = this.validators?.responses?.[call.op];
      const checked = schema ? await validate(schema, value, what) : value;
      return { text, value: (validated ? checked : value) as T };
    } finally {
      linked.dispose();
    }
  }

  /**
   * Sends a call and reads its success body as bytes (a file, an archive: never
   * validated), with the status and headers it came with.
   */
  async bytes(call: Call): Promise<BytesResponse> {
    const linked = linkSignals(this.signal, call.signal);
    try {
      const response = await this.send(call, linked.signal);
      const bytes = new Uint8Array(await read(response, `${call.op} response`, linked.signal, 'arrayBuffer'));
      return { status: response.status, headers: response.headers, bytes };
    } finally {
      linked.dispose();
    }
  }

  /** Turns a non-2xx response into a `ProblemError`. */
  async problem(response: Response): Promise<ProblemError> {
    let text = '';
    try {
      text = await response.text();
    } catch {
      // The body broke off: the status alone still says what happened.
    }
    const problem = toProblem(response.status, response.statusText, text);
    const schema = this.validators?.problem;
    if (schema && problem.type !== 'about:blank') await validate(schema, problem, `problem (${response.status})`);
    return new ProblemError(problem, response.headers);
  }
}

/** Reads a JSON body; a body that is not JSON is a `ProtocolError`. */
export async function readJson(response: Response, what: string, signal: AbortSignal): Promise<unknown> {
  return parseJson(await read(response, what, signal, 'text'), what);
}

/** Reads a body as text or bytes; a body that breaks off is a `ConnectionError`. */
async function read<K extends 'text' | 'arrayBuffer'>(
  response: Response,
  what: string,
  signal: AbortSignal,
  as: K,
): Promise<Awaited<ReturnType<Response[K]>>> {
  try {
    return (await response[as]()) as Awaited<ReturnType<Response[K]>>;
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw new ConnectionError(`${what} broke off: ${describe(error)}`, { cause: error });
  }
}

/** Parses JSON text; text that is not JSON is a `ProtocolError`. */
function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ProtocolError(`${what} is not JSON (${describe(error)}): ${excerpt(text)}`, { cause: error });
  }
}

/** Validates `value` with a Standard Schema validator; rejects with `ValidationError`. */
export async function validate(schema: StandardSchemaV1, value: unknown, target: string): Promise<unknown> {
  const result = await schema['~standard'].validate(value);
  if (result.issues) throw new ValidationError(target, result.issues, value);
  return result.value;
}

/** The problem a non-2xx answer carries; a body that is not one becomes `about:blank`. */
export function toProblem(status: number, statusText: string, text: string): Problem {
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const notProblem = text === '' ? 'the response had no body' : `the response was not a problem: ${excerpt(text)}`;
  return asProblem(parsed, status, statusText || `HTTP ${status}`, notProblem);
}

/**
 * `value` as a problem: an object keeps its members (missing ones filled in from `status`
 * and `title`); anything else becomes `about:blank` with `detail` set to `notProblem`.
 */
export function asProblem(value: unknown, status: number, title: string, notProblem: string): Problem {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const body = value as Record<string, unknown>;
    return {
      ...body,
      type: typeof body.type === 'string' ? body.type : 'about:blank',
      title: typeof body.title === 'string' ? body.title : title,
      status: typeof body.status === 'number' ? body.status : status,
      detail: typeof body.detail === 'string' ? body.detail : '',
    } as Problem;
  }
  return { type: 'about:blank', title, status, detail: notProblem };
}

/** The start of `text` on one line. */
export function excerpt(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}
