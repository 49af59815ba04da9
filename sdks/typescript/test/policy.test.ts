// Session policy and messages as parts, against the real daemon's mock agent (which honours
// no policy field and takes no images): parts start a turn, refusals are typed problems
// naming the field; and the bodies the helpers build.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ProblemError,
  imagePart,
  messageBody,
  textPart,
  type CreateSessionRequest,
  type ImagePart,
  type MessageInput,
  type MessagePart,
  type SendMessageRequest,
  type UniversalEvent,
} from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, startDaemon, uniqueId } from './helpers.js';

const PREFIX = 'urn:sandbox-daemon:problem:';
// The PNG signature and a little more.
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array<number>(16).fill(0)]);

/** The ProblemError `promise` rejects with; fails unless it is a 422 of `kind`. */
async function refused(promise: Promise<unknown>, kind: string): Promise<ProblemError> {
  const error = await promise.then(
    () => assert.fail(`expected a 422 ${kind}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ProblemError, `expected a ProblemError, got ${String(error)}`);
  assert.equal(error.status, 422, error.message);
  assert.equal(error.type, `${PREFIX}${kind}`, error.detail);
  assert.equal(error.kind, kind);
  return error;
}

function userParts(events: UniversalEvent[]): unknown[] {
  return events.flatMap((e) =>
    e.type === 'itemCompleted' && e.data.item.role === 'user' ? [e.data.item.content] : [],
  );
}

describe('session policy and message parts (mock agent)', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
  });

  it('text parts start a turn, and the user item carries the parts', async () => {
    const session = await daemon.startSession(uniqueId('parts'), { agent: 'mock' });
    const parts: MessagePart[] = [textPart('hello'), { type: 'text', text: 'there' }];
    const { ended, events } = await session.run(parts);
    assert.equal(ended.stopReason, 'completed');
    assert.deepEqual(userParts(events), [
      [
        { type: 'text', text: 'hello' },
        { type: 'text', text: 'there' },
      ],
    ]);
    // Text is still sent as `message`, one text part; turn() takes parts too.
    const again = await collect(session.turn('again'));
    assert.deepEqual(userParts(again), [[{ type: 'text', text: 'again' }]]);
    await session.delete();
  });

  it('an image is refused 422 policy-unsupported naming content[1]', async () => {
    const { agents } = await daemon.listAgents();
    const mock = agents.find((a) => a.id === 'mock');
    assert.equal(mock?.capabilities.images, false);
    assert.deepEqual(mock?.policy?.imageTypes, []);

    const session = await daemon.startSession(uniqueId('image'), { agent: 'mock' });
    for (const image of [imagePart(PNG), imagePart({ path: 'screenshot.png' })]) {
      const error = await refused(session.send([textPart('what is this?'), image]), 'policy-unsupported');
      assert.match(error.detail, /`content\[1\]`/);
    }
    const viaClient = await refused(
      daemon.sendMessage(session.id, { content: [textPart('and this?'), imagePart(PNG.buffer)] }),
      'policy-unsupported',
    );
    assert.match(viaClient.detail, /`content\[1\]`/);
    assert.equal((await session.info()).currentTurnId ?? null, null); // no turn started
    await session.delete();
  });

  const fields: Array<[string, Omit<CreateSessionRequest, 'agent'>]> = [
    ['systemPrompt', { systemPrompt: 'Answer in French.' }],
    ['tools', { tools: { deny: ['shell'] } }],
    ['tools', { tools: { allow: ['read', 'grep'] } }],
    ['maxTurns', { maxTurns: 3 }],
    ['env', { env: { PROJECT: 'demo' } }],
    ['mcpServers', { mcpServers: { kit: { type: 'stdio', command: '/bin/true', args: ['--stdio'] } } }],
    [
      'mcpServers',
      { mcpServers: { web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } } } },
    ],
  ];
  for (const [field, policy] of fields) {
    it(`a mock session with ${JSON.stringify(policy)} is refused naming \`${field}\``, async () => {
      const id = uniqueId('policy');
      const error = await refused(daemon.createSession(id, { agent: 'mock', ...policy }), 'policy-unsupported');
      assert.ok(error.detail.startsWith(`\`${field}\``), error.detail);
      await assert.rejects(daemon.getSession(id), (e: unknown) => e instanceof ProblemError && e.status === 404);
    });
  }

  it('bad input is 422 invalid-body naming the field', async () => {
    const error = await refused(
      daemon.startSession(uniqueId('bad'), { agent: 'mock', tools: { allow: ['Bash'] } }),
      'invalid-body',
    );
    assert.match(error.detail, /`tools\.allow\[0\]`/);

    const session = await daemon.startSession(uniqueId('bad'), { agent: 'mock' });
    const bmp = { type: 'image', mediaType: 'image/bmp', data: 'AA==' } as unknown as ImagePart;
    const badPart = await refused(session.send([textPart('look'), bmp]), 'invalid-body');
    assert.match(badPart.detail, /`content\[1\]\.mediaType`/);
    const empty = await refused(session.send([]), 'invalid-body');
    assert.match(empty.detail, /`content`/);
    await session.delete();
  });
});

describe('message bodies and parts', () => {
  it('sends text as `message` and parts as `content`', () => {
    assert.deepEqual(messageBody('hello'), { message: 'hello' });
    const parts: MessageInput = [textPart('look'), imagePart({ path: 'shots/a.png' })];
    assert.deepEqual(messageBody(parts), {
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', mediaType: 'image/png', path: 'shots/a.png' },
      ],
    });
  });

  it('encodes image bytes as base64 and recognises the type', () => {
    for (let length = 0; length < 40; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 255);
      const part = imagePart(bytes, 'image/gif');
      assert.equal(part.data, Buffer.from(bytes).toString('base64'), `length ${length}`);
      assert.equal(part.path, undefined);
    }
    assert.equal(imagePart(PNG).mediaType, 'image/png');
    assert.equal(imagePart(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0])).mediaType, 'image/jpeg');
    assert.equal(imagePart(new TextEncoder().encode('GIF89a......')).mediaType, 'image/gif');
    assert.equal(imagePart(new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 ')).mediaType, 'image/webp');
    assert.equal(imagePart({ path: 'a/b.JPG' }).mediaType, 'image/jpeg');
    assert.equal(imagePart({ path: 'b.webp' }).mediaType, 'image/webp');
    assert.throws(() => imagePart(new TextEncoder().encode('BM....')), TypeError);
    assert.throws(() => imagePart({ path: 'notes.txt' }), /mediaType/);
  });
});

// Type-level: parts are the spec's `MessagePart`; a bare string is not a part; the
// alternatives of a message (`message` | `content`) and of an image (`data` | `path`) hold.
// @ts-expect-error a part is an object tagged by `type`
const notAPart: MessageInput = ['text'];
// @ts-expect-error mediaType is one of the spec's image types
const notAType = imagePart(PNG, 'image/bmp');
// @ts-expect-error an image part gives `data` or `path`
const noSource: ImagePart = { type: 'image', mediaType: 'image/png' };
// @ts-expect-error a message gives `message` or `content`
const noMessage: SendMessageRequest = {};
void [notAPart, notAType, noSource, noMessage];
