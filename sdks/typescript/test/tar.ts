// A minimal tar (ustar) writer and reader for the files tests: enough to build the archives
// the tests upload and to read back the entries of a snapshot, with no dependency.

/** One entry of an archive. */
export type TarEntry =
  | { readonly type: 'file'; readonly name: string; readonly content: string | Uint8Array; readonly mode?: number }
  | { readonly type: 'directory'; readonly name: string; readonly mode?: number }
  | { readonly type: 'symlink'; readonly name: string; readonly target: string }
  | { readonly type: 'hardlink'; readonly name: string; readonly target: string };

/** An entry read back: its name, type flag, size, content (files) and link target. */
export interface ReadEntry {
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';
  readonly size: number;
  readonly content: Uint8Array;
  readonly target: string;
}

const BLOCK = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const FLAGS = { file: '0', hardlink: '1', symlink: '2', directory: '5' } as const;

/** A ustar archive of `entries` (fixed mtime, uid and gid: the same bytes every run). */
export function tar(entries: readonly TarEntry[]): Uint8Array<ArrayBuffer> {
  const blocks: Uint8Array[] = [];
  for (const entry of entries) {
    const content = entry.type === 'file' ? (typeof entry.content === 'string' ? encoder.encode(entry.content) : entry.content) : new Uint8Array();
    const header = new Uint8Array(BLOCK);
    const put = (offset: number, length: number, text: string): void => {
      const bytes = encoder.encode(text);
      if (bytes.length > length) throw new Error(`tar: ${JSON.stringify(text)} does not fit in ${length} bytes`);
      header.set(bytes, offset);
    };
    const octal = (offset: number, length: number, value: number): void => put(offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
    const defaultMode = entry.type === 'directory' ? 0o755 : entry.type === 'file' ? 0o644 : 0o777;
    put(0, 100, entry.name);
    octal(100, 8, 'mode' in entry && entry.mode !== undefined ? entry.mode : defaultMode);
    octal(108, 8, 0); // uid
    octal(116, 8, 0); // gid
    octal(124, 12, content.length);
    octal(136, 12, 1_700_000_000); // mtime
    put(148, 8, '        '); // the checksum counts its own field as spaces
    put(156, 1, FLAGS[entry.type]);
    if (entry.type === 'symlink' || entry.type === 'hardlink') put(157, 100, entry.target);
    put(257, 6, 'ustar\0');
    put(263, 2, '00');
    const sum = header.reduce((a, b) => a + b, 0);
    put(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
    blocks.push(header, content, new Uint8Array((BLOCK - (content.length % BLOCK)) % BLOCK));
  }
  blocks.push(new Uint8Array(2 * BLOCK)); // the end: two zero blocks
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const block of blocks) {
    out.set(block, at);
    at += block.length;
  }
  return out;
}

/** The entries of a tar archive (ustar, GNU long names and pax `path`/`linkpath` records). */
export function untar(archive: Uint8Array): ReadEntry[] {
  const entries: ReadEntry[] = [];
  let longName: string | undefined;
  let longLink: string | undefined;
  for (let at = 0; at + BLOCK <= archive.length; ) {
    const header = archive.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    const text = (offset: number, length: number): string => {
      const field = header.subarray(offset, offset + length);
      const end = field.indexOf(0);
      return decoder.decode(end < 0 ? field : field.subarray(0, end));
    };
    const size = Number.parseInt(text(124, 12).trim() || '0', 8);
    const flag = text(156, 1);
    const content = archive.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (flag === 'L' || flag === 'K') {
      const value = decoder.decode(content).replace(/\0+$/, '');
      if (flag === 'L') longName = value;
      else longLink = value;
      continue;
    }
    if (flag === 'x') {
      for (const record of decoder.decode(content).split('\n')) {
        const match = /^\d+ (path|linkpath)=(.*)$/.exec(record);
        if (match?.[1] === 'path') longName = match[2];
        if (match?.[1] === 'linkpath') longLink = match[2];
      }
      continue;
    }
    const prefix = text(257, 6).startsWith('ustar') ? text(345, 155) : '';
    const name = longName ?? (prefix ? `${prefix}/${text(0, 100)}` : text(0, 100));
    const target = longLink ?? text(157, 100);
    longName = undefined;
    longLink = undefined;
    const type =
      flag === '0' || flag === '' ? 'file' : flag === '5' ? 'directory' : flag === '2' ? 'symlink' : flag === '1' ? 'hardlink' : 'other';
    entries.push({ name, type, size, content: new Uint8Array(content), target });
  }
  return entries;
}
