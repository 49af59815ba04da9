/**
 * A Server-Sent Events parser following the WHATWG HTML "event stream interpretation"
 * rules: lines end with CRLF, LF or CR (also when split across chunks), `:` lines are
 * comments, one optional space after the colon is dropped, `data` lines join with `\n`,
 * an `id` containing NUL is ignored, `retry` takes digits only, and an event without data
 * is not dispatched. Text in, messages out: the caller decodes bytes (`TextDecoder` with
 * `stream: true`), so a multi-byte character split across chunks stays whole.
 *
 * @module
 */

/** One dispatched SSE message. */
export interface SseMessage {
  /** The `event` field, or `"message"` when the frame had none. */
  readonly event: string;
  /** The `data` lines joined with `\n`. */
  readonly data: string;
  /** The last event id seen so far in the stream (it carries over to later frames), or `""`. */
  readonly id: string;
}

/** What one `push` produced. */
export interface SseChunkResult {
  /** Messages completed by this chunk, in order. */
  readonly messages: SseMessage[];
  /** Comment lines (without the leading `:`) seen in this chunk. */
  readonly comments: string[];
  /** The last valid `retry` value (milliseconds) in this chunk, if any. */
  readonly retry?: number;
}

/** An incremental SSE parser: feed text chunks with `push`, in stream order. */
export class SseParser {
  #buffer = '';
  #started = false;
  #skipLf = false;
  #data: string[] = [];
  #event = '';
  #lastId = '';

  /** The last event id buffer (what a reconnect would send as `Last-Event-ID`). */
  get lastEventId(): string {
    return this.#lastId;
  }

  /** Parses the next chunk of text; returns the messages it completed. */
  push(text: string): SseChunkResult {
    const messages: SseMessage[] = [];
    const comments: string[] = [];
    let retry: number | undefined;
    let chunk = text;
    if (!this.#started && chunk.length > 0) {
      this.#started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.#skipLf && chunk.length > 0) {
      this.#skipLf = false;
      if (chunk.charCodeAt(0) === 0x0a) chunk = chunk.slice(1);
    }
    const buffer = this.#buffer + chunk;
    let start = 0;
    // Next CR and LF at or after `start`; -1 once there is none left (so scanning is linear).
    let cr = buffer.indexOf('\r');
    let lf = buffer.indexOf('\n');
    for (;;) {
      if (cr >= 0 && cr < start) cr = buffer.indexOf('\r', start);
      if (lf >= 0 && lf < start) lf = buffer.indexOf('\n', start);
      const lineEnd = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (lineEnd < 0) break;
      const line = buffer.slice(start, lineEnd);
      if (lineEnd === cr) {
        if (lineEnd + 1 === buffer.length) {
          // A CR at the very end: an LF opening the next chunk belongs to this line break.
          this.#skipLf = true;
          start = lineEnd + 1;
        } else {
          start = lf === lineEnd + 1 ? lineEnd + 2 : lineEnd + 1;
        }
      } else {
        start = lineEnd + 1;
      }
      const result = this.#line(line);
      if (result === undefined) continue;
      if (typeof result === 'number') retry = result;
      else if ('comment' in result) comments.push(result.comment);
      else messages.push(result);
    }
    this.#buffer = buffer.slice(start);
    return retry === undefined ? { messages, comments } : { messages, comments, retry };
  }

  /**
   * Ends the stream. A frame not closed by an empty line is discarded, as the standard
   * requires; returns whether such an incomplete frame (or line) was pending.
   */
  end(): boolean {
    const pending = this.#buffer.length > 0 || this.#data.length > 0 || this.#event !== '';
    this.#buffer = '';
    this.#data = [];
    this.#event = '';
    this.#skipLf = false;
    return pending;
  }

  #line(line: string): SseMessage | { comment: string } | number | undefined {
    if (line === '') return this.#dispatch();
    if (line.charCodeAt(0) === 0x3a) return { comment: line.slice(1) };
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        return undefined;
      case 'data':
        this.#data.push(value);
        return undefined;
      case 'id':
        if (!value.includes('\0')) this.#lastId = value;
        return undefined;
      case 'retry':
        return /^[0-9]+$/.test(value) ? Number(value) : undefined;
      default:
        return undefined;
    }
  }

  #dispatch(): SseMessage | undefined {
    const event = this.#event;
    this.#event = '';
    if (this.#data.length === 0) return undefined;
    const data = this.#data.join('\n');
    this.#data = [];
    return { event: event === '' ? 'message' : event, data, id: this.#lastId };
  }
}
