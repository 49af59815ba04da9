/**
 * A session's workspace files: what the files methods take and answer beyond the spec's
 * JSON types (bytes in, bytes out, a byte range, an archive's headers), and the helpers
 * that put them on the wire.
 *
 * @module
 */

import { ProtocolError } from './errors.js';

/**
 * A file's new content for `writeFile`: text (written as UTF-8), bytes, a `Blob` (a
 * `File`), or a stream of bytes (sent as it is read).
 */
export type FileContent = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/**
 * A tar archive, or a gzip-compressed one, for `uploadFiles`: bytes, a `Blob` (a `File`),
 * or a stream of bytes.
 */
export type ArchiveInput = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/**
 * A byte range of a file for `readFile`, counted as HTTP counts: `{ start, end }` (both
 * inclusive; an `end` past the file's end stops at its end), `{ start }` (to the end), or
 * `{ suffix }` (the last `suffix` bytes). A `start` at or past the end rejects with
 * `ProblemError` 416 `range-not-satisfiable`.
 */
export type ByteRange = { readonly start: number; readonly end?: number } | { readonly suffix: number };

/**
 * A tar.gz snapshot as `archiveFiles` answers it: the archive and what its headers say of
 * it. A count is `undefined` when its header did not reach the client (a browser on
 * another origin only sees the headers the daemon exposes to it).
 */
export interface WorkspaceArchive {
  /** The tar.gz, byte for byte. */
  readonly data: Uint8Array;
  /** Regular files in it (`X-Archive-Files`). */
  readonly files: number | undefined;
  /** Their bytes, uncompressed (`X-Archive-Bytes`). */
  readonly bytes: number | undefined;
  /**
   * Paths left out (`X-Archive-Skipped`): over `maxFileBytes`, unreadable, or not a file,
   * directory or symlink.
   */
  readonly skipped: number | undefined;
  /** The first 50 of them, decoded (`X-Archive-Skipped-Paths`). */
  readonly skippedPaths: string[] | undefined;
}

/** The `Range` header of a byte range; a `TypeError` for one that is not a range. */
export function rangeHeader(range: ByteRange): string {
  const ok = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
  if ('suffix' in range ? !ok(range.suffix) : !ok(range.start) || (range.end !== undefined && !(ok(range.end) && range.end >= range.start))) {
    throw new TypeError(`not a byte range: ${JSON.stringify(range)}`);
  }
  return 'suffix' in range ? `bytes=-${range.suffix}` : `bytes=${range.start}-${range.end ?? ''}`;
}

/**
 * The part of a whole file a range asks for: what a server that ignores `Range` (a proxy)
 * leaves for the client to cut.
 */
export function sliceRange(bytes: Uint8Array, range: ByteRange): Uint8Array {
  return 'suffix' in range
    ? bytes.subarray(Math.max(0, bytes.length - range.suffix))
    : bytes.subarray(range.start, range.end === undefined ? undefined : range.end + 1);
}

/**
 * The content type `uploadFiles` sends an archive with: `application/gzip` when it starts
 * with gzip's magic bytes, else `application/x-tar`; a stream (not read ahead) is
 * `application/octet-stream`, which the daemon takes too (it tells tar and gzip apart by
 * their first bytes either way).
 */
export async function archiveType(archive: ArchiveInput): Promise<string> {
  if (archive instanceof ReadableStream) return 'application/octet-stream';
  const head =
    archive instanceof Uint8Array
      ? archive
      : new Uint8Array(archive instanceof ArrayBuffer ? archive : await archive.slice(0, 2).arrayBuffer());
  return head[0] === 0x1f && head[1] === 0x8b ? 'application/gzip' : 'application/x-tar';
}

/** What the headers of an `archiveFiles` answer say of the archive. */
export function archiveOf(data: Uint8Array, headers: Headers): WorkspaceArchive {
  const header = (name: string): string | null => headers.get(`x-archive-${name}`);
  const count = (name: string): number | undefined => {
    const value = header(name);
    if (value === null) return undefined;
    if (!/^\d+$/.test(value)) throw new ProtocolError(`archiveFiles: X-Archive-${name} is not a count: ${value}`);
    return Number(value);
  };
  const paths = header('skipped-paths');
  return {
    data,
    files: count('files'),
    bytes: count('bytes'),
    skipped: count('skipped'),
    // Each path is percent-encoded UTF-8 (so `,` and `%` in a name are escaped).
    skippedPaths: paths === null ? undefined : paths === '' ? [] : paths.split(',').map(decodeURIComponent),
  };
}
