/**
 * Messages as text or as parts (text and images): the body `sendMessage` takes for each,
 * and helpers that build the parts. The part types are the spec's (`MessagePart`).
 *
 * @module
 */

import type { ImageMediaType, ImagePart, MessageInput, RequestBody, TextPart } from './types.js';

/** A text part of a message. */
export function textPart(text: string): TextPart {
  return { type: 'text', text };
}

/**
 * An image part of a message. Bytes are sent inline (base64; at most 5 MiB decoded);
 * `{ path }` names a file in the session's working directory (relative to it, or absolute
 * inside it), which the daemon reads. `mediaType` (`image/png`, `image/jpeg`, `image/gif`,
 * `image/webp`) is, when left out, recognised from the bytes' signature or the path's
 * extension; a `TypeError` when it cannot be.
 *
 * Only agents whose `policy.imageTypes` lists the type take it; others refuse the message
 * with a 422 `policy-unsupported` naming the part (`content[1]`).
 */
export function imagePart(
  source: Uint8Array | ArrayBuffer | { readonly path: string },
  mediaType?: ImageMediaType,
): ImagePart {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    const bytes = source instanceof Uint8Array ? source : new Uint8Array(source);
    const type = mediaType ?? sniff(bytes);
    if (!type) throw new TypeError('not a PNG, JPEG, GIF or WebP image: pass its mediaType');
    return { type: 'image', mediaType: type, data: base64(bytes) };
  }
  const type = mediaType ?? byExtension(source.path);
  if (!type) throw new TypeError(`cannot tell the image type of ${JSON.stringify(source.path)}: pass its mediaType`);
  return { type: 'image', mediaType: type, path: source.path };
}

/** `sendMessage`'s body for a message: text as `message`, parts as `content`. */
export function messageBody(message: MessageInput): RequestBody<'sendMessage'> {
  return typeof message === 'string' ? { message } : { content: [...message] };
}

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  return signature.every((byte, i) => bytes[offset + i] === byte);
}

const ascii = (text: string): number[] => Array.from(text, (c) => c.charCodeAt(0));

function sniff(bytes: Uint8Array): ImageMediaType | undefined {
  if (startsWith(bytes, [0x89, ...ascii('PNG\r\n\x1a\n')])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return undefined;
}

const EXTENSIONS: Readonly<Record<string, ImageMediaType>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

function byExtension(path: string): ImageMediaType | undefined {
  const match = /\.([A-Za-z]+)$/.exec(path);
  return match?.[1] ? EXTENSIONS[match[1].toLowerCase()] : undefined;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding (no `btoa`/`Buffer`: the inline entry uses no such global). */
function base64(bytes: Uint8Array): string {
  const chunks: string[] = [];
  let chunk = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    chunk +=
      ALPHABET.charAt((n >> 18) & 63) +
      ALPHABET.charAt((n >> 12) & 63) +
      (i + 1 < bytes.length ? ALPHABET.charAt((n >> 6) & 63) : '=') +
      (i + 2 < bytes.length ? ALPHABET.charAt(n & 63) : '=');
    if (chunk.length >= 65536) {
      chunks.push(chunk);
      chunk = '';
    }
  }
  chunks.push(chunk);
  return chunks.join('');
}
