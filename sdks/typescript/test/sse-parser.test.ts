// The SSE parser against the WHATWG event-stream rules, whatever the chunking.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser, type SseMessage } from 'sandbox-daemon/inline';

/** Parses `text` fed in the given pieces; returns messages, comments and retries. */
function parse(pieces: readonly string[]): { messages: SseMessage[]; comments: string[]; retries: number[]; pending: boolean } {
  const parser = new SseParser();
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  for (const piece of pieces) {
    const result = parser.push(piece);
    messages.push(...result.messages);
    comments.push(...result.comments);
    if (result.retry !== undefined) retries.push(result.retry);
  }
  return { messages, comments, retries, pending: parser.end() };
}

/** Every way to cut `text` in two, plus one piece per character. */
function splits(text: string): string[][] {
  const out: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

const DAEMON_FRAMES =
  'id: 1\nevent: sessionStarted\ndata: {"sequence":1,"type":"sessionStarted"}\n\n' +
  ': keep-alive\n\n' +
  'id: 2\nevent: turnStarted\ndata: {"sequence":2,"type":"turnStarted"}\n\n';

describe('SseParser', () => {
  it('reads the daemon frames the same way however the text is chunked', () => {
    for (const pieces of splits(DAEMON_FRAMES)) {
      const { messages, comments } = parse(pieces);
      assert.deepEqual(messages, [
        { event: 'sessionStarted', data: '{"sequence":1,"type":"sessionStarted"}', id: '1' },
        { event: 'turnStarted', data: '{"sequence":2,"type":"turnStarted"}', id: '2' },
      ]);
      assert.deepEqual(comments, [' keep-alive']);
    }
  });

  it('accepts CRLF, CR and LF line ends, also a CRLF split across chunks', () => {
    const lf = 'event: a\ndata: x\n\ndata: y\n\n';
    for (const text of [lf, lf.replaceAll('\n', '\r\n'), lf.replaceAll('\n', '\r')]) {
      for (const pieces of splits(text)) {
        assert.deepEqual(
          parse(pieces).messages.map((m) => [m.event, m.data]),
          [
            ['a', 'x'],
            ['message', 'y'],
          ],
          JSON.stringify(pieces),
        );
      }
    }
  });

  it('joins data lines with LF and keeps spaces after the first', () => {
    const { messages } = parse(['data:  two spaces\ndata:no space\ndata\ndata: \n\n']);
    assert.equal(messages[0]?.data, ' two spaces\nno space\n\n');
  });

  it('does not dispatch a frame without data, but keeps its id for later frames', () => {
    const { messages } = parse(['id: 7\nevent: ignored\n\ndata: a\n\n', 'data: b\n\n']);
    assert.deepEqual(messages, [
      { event: 'message', data: 'a', id: '7' },
      { event: 'message', data: 'b', id: '7' },
    ]);
  });

  it('ignores an id with NUL, unknown fields and a field name without colon', () => {
    const { messages } = parse(['id: 3\n\nid: 4\0x\nfoo: bar\nevent\ndata: z\n\n']);
    assert.deepEqual(messages, [{ event: 'message', data: 'z', id: '3' }]);
  });

  it('reports retry only when it is all digits', () => {
    assert.deepEqual(parse(['retry: 1500\nretry: 2x\nretry: -1\n\n']).retries, [1500]);
  });

  it('drops a leading BOM once and discards an unterminated last frame', () => {
    const { messages, pending } = parse(['\uFEFFdata: a\n\n', 'data: partial']);
    assert.deepEqual(messages, [{ event: 'message', data: 'a', id: '' }]);
    assert.equal(pending, true);
    assert.equal(parse(['data: a\n\n']).pending, false);
  });

  it('keeps multi-byte characters whole when bytes split inside one', () => {
    const bytes = new TextEncoder().encode('data: ünïcødé 🚀\n\n');
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
      const parser = new SseParser();
      const messages = [
        ...parser.push(decoder.decode(bytes.slice(0, cut), { stream: true })).messages,
        ...parser.push(decoder.decode(bytes.slice(cut), { stream: true })).messages,
        ...parser.push(decoder.decode()).messages,
      ];
      assert.deepEqual(messages, [{ event: 'message', data: 'ünïcødé 🚀', id: '' }]);
    }
  });

  it('parses a large stream in linear time', () => {
    const frame = (i: number): string => `id: ${i}\nevent: itemDelta\ndata: {"sequence":${i},"delta":"${'x'.repeat(200)}"}\n\n`;
    const text = Array.from({ length: 20_000 }, (_, i) => frame(i + 1)).join('');
    const started = performance.now();
    const parser = new SseParser();
    let count = 0;
    for (let i = 0; i < text.length; i += 65_536) count += parser.push(text.slice(i, i + 65_536)).messages.length;
    assert.equal(count, 20_000);
    assert.equal(parser.lastEventId, '20000');
    // 4.5 MB: a quadratic scan would take seconds; linear takes a few tens of ms.
    assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
  });
});
