// The files API of a session's workspace through the SDK, against the real daemon: write and
// read (whole, ranges), list, delete, paths that try to leave the workspace, uploads of tar
// and tar.gz archives built here, and snapshots whose headers the client parses. Then what
// the client puts on the wire and makes of odd answers, through a fake fetch.

import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ProblemError, SandboxDaemon, type Session } from 'sandbox-daemon';
import { SandboxDaemon as InlineSandboxDaemon } from 'sandbox-daemon/inline';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { type Exchange, isProblem, type NoTokenDaemon, recordingFetch, startDaemon, startNoTokenDaemon, uniqueId } from './helpers.js';
import { tar, untar } from './tar.js';

/** Bytes 0..255, `times` over. */
function allBytes(times = 1): Uint8Array<ArrayBuffer> {
  return Uint8Array.from({ length: 256 * times }, (_, i) => i % 256);
}

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** Input the types forbid. */
function unchecked<T>(value: unknown): T {
  return value as T;
}

describe('workspace files against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  /** A validating client of the same daemon that records every exchange. */
  let client: SandboxDaemon;
  const exchanges: Exchange[] = [];
  let root: string;

  before(async () => {
    daemon = await startDaemon({ validate: true });
    root = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-files-')));
    client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      fetch: recordingFetch(exchanges),
    });
  });
  after(async () => {
    await daemon.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A mock session (of the recording client) whose working directory is a fresh directory. */
  async function newSession(): Promise<{ session: Session; cwd: string }> {
    const cwd = join(root, uniqueId('ws'));
    await mkdir(cwd);
    return { session: await client.startSession(uniqueId('files'), { agent: 'mock', cwd }), cwd };
  }

  /** The statuses of the recorded exchanges of `method` on `session`'s `suffix` route. */
  function statuses(session: Session, method: string, suffix: string): number[] {
    return exchanges
      .filter((e) => e.method === method && e.path === `/sessions/${session.id}/files${suffix}`)
      .map((e) => e.status);
  }

  it('writeFile creates a file (201), replaces it (200), and readFile reads it back', async () => {
    const { session, cwd } = await newSession();
    const created = await session.writeFile('notes/hello.txt', 'hello, world\n');
    assert.deepEqual(
      { path: created.path, name: created.name, kind: created.kind, size: created.size, mode: created.mode },
      { path: 'notes/hello.txt', name: 'hello.txt', kind: 'file', size: 13, mode: 0o644 },
    );
    assert.ok(Date.parse(created.modifiedAt) > 0, created.modifiedAt);
    assert.equal(await readFile(join(cwd, 'notes', 'hello.txt'), 'utf8'), 'hello, world\n', 'written in the working directory');
    assert.equal(text(await session.readFile('notes/hello.txt')), 'hello, world\n');

    // Replaced by bytes that are not text; a replaced file keeps its permission bits.
    await chmod(join(cwd, 'notes', 'hello.txt'), 0o600);
    const replaced = await client.writeFile(session.id, 'notes/hello.txt', allBytes());
    assert.equal(replaced.size, 256);
    assert.equal(replaced.mode, 0o600);
    assert.deepEqual(await session.readFile('notes/hello.txt'), allBytes());
    assert.deepEqual(statuses(session, 'PUT', '/content'), [201, 200], 'created, then replaced');
    assert.deepEqual(statuses(session, 'GET', '/content'), [200, 200]);

    const put = exchanges.find((e) => e.method === 'PUT' && e.path === `/sessions/${session.id}/files/content`);
    assert.equal(put?.requestHeaders.get('content-type'), 'application/octet-stream');
    assert.equal(put?.search.get('path'), 'notes/hello.txt');
  });

  it('writeFile takes an ArrayBuffer, a Blob, a stream and an empty file', async () => {
    const { session, cwd } = await newSession();
    await session.writeFile('buffer.bin', allBytes().buffer);
    await session.writeFile('blob.bin', new Blob([allBytes(), allBytes()]));
    await session.writeFile('stream.bin', new Blob([allBytes(64)]).stream());
    const empty = await session.writeFile('empty', new Uint8Array());
    assert.equal(empty.size, 0);
    assert.deepEqual(new Uint8Array(await readFile(join(cwd, 'buffer.bin'))), allBytes());
    assert.deepEqual(await session.readFile('blob.bin'), allBytes(2));
    assert.deepEqual(await session.readFile('stream.bin'), allBytes(64));
    assert.deepEqual(await session.readFile('empty'), new Uint8Array());
    assert.deepEqual(statuses(session, 'PUT', '/content'), [201, 201, 201, 201]);
  });

  it('readFile with a range answers that part (206); a range from the end of the file is 416', async () => {
    const { session } = await newSession();
    await session.writeFile('data.bin', allBytes(4)); // 1024 bytes
    assert.deepEqual(await session.readFile('data.bin', { range: { start: 10, end: 19 } }), allBytes(4).subarray(10, 20));
    assert.deepEqual(await session.readFile('data.bin', { range: { start: 1000 } }), allBytes(4).subarray(1000));
    assert.deepEqual(await session.readFile('data.bin', { range: { suffix: 5 } }), allBytes(4).subarray(1019));
    assert.deepEqual(await session.readFile('data.bin', { range: { start: 1020, end: 5000 } }), allBytes(4).subarray(1020), 'an end past the end stops there');
    assert.deepEqual(await session.readFile('data.bin', { range: { suffix: 5000 } }), allBytes(4), 'a suffix longer than the file: all of it');
    assert.deepEqual(statuses(session, 'GET', '/content'), [206, 206, 206, 206, 206]);
    const asked = exchanges.filter((e) => e.path === `/sessions/${session.id}/files/content` && e.method === 'GET');
    assert.deepEqual(
      asked.map((e) => e.requestHeaders.get('range')),
      ['bytes=10-19', 'bytes=1000-', 'bytes=-5', 'bytes=1020-5000', 'bytes=-5000'],
    );

    const error = await session.readFile('data.bin', { range: { start: 1024 } }).catch((e: unknown) => e);
    assert.ok(isProblem(416, 'range-not-satisfiable')(error));
    assert.equal((error as ProblemError).headers.get('content-range'), 'bytes */1024');
    await assert.rejects(session.readFile('data.bin', { range: { suffix: 0 } }), isProblem(416, 'range-not-satisfiable'));
    // A range the client cannot send is refused before any request.
    const before = exchanges.length;
    await assert.rejects(session.readFile('data.bin', { range: { start: 5, end: 4 } }), TypeError);
    await assert.rejects(session.readFile('data.bin', { range: { start: -1 } }), TypeError);
    await assert.rejects(session.readFile('data.bin', { range: { suffix: 1.5 } }), TypeError);
    await assert.rejects(session.readFile('data.bin', { range: unchecked({ end: 4 }) }), TypeError);
    assert.equal(exchanges.length, before);
  });

  it('listFiles lists a directory depth first in name order, 1 or 2 levels down', async () => {
    const { session, cwd } = await newSession();
    await mkdir(join(cwd, 'src', 'deep', 'deeper'), { recursive: true });
    await writeFile(join(cwd, 'src', 'main.ts'), 'main');
    await writeFile(join(cwd, 'src', 'deep', 'x.ts'), 'x');
    await writeFile(join(cwd, 'README.md'), '# readme\n');
    await mkdir(join(cwd, 'empty'));
    await symlink('README.md', join(cwd, 'link'));

    const top = await session.listFiles();
    assert.deepEqual({ path: top.path, depth: top.depth, truncated: top.truncated }, { path: '', depth: 1, truncated: false });
    assert.deepEqual(
      top.entries.map((e) => [e.path, e.kind]),
      [
        ['README.md', 'file'],
        ['empty', 'directory'],
        ['link', 'symlink'],
        ['src', 'directory'],
      ],
    );
    const link = top.entries.find((e) => e.kind === 'symlink');
    assert.equal(link?.target, 'README.md');
    assert.equal(link?.size, 'README.md'.length, "a symlink's size is its target's length");
    assert.equal(top.entries.find((e) => e.name === 'README.md')?.size, 9);

    const two = await client.listFiles(session.id, { depth: 2 });
    assert.equal(two.depth, 2);
    assert.deepEqual(
      two.entries.map((e) => e.path),
      ['README.md', 'empty', 'link', 'src', 'src/deep', 'src/main.ts'],
    );
    const sub = await session.listFiles({ path: 'src', depth: 2 });
    assert.equal(sub.path, 'src');
    assert.deepEqual(
      sub.entries.map((e) => [e.path, e.name]),
      [
        ['src/deep', 'deep'],
        ['src/deep/deeper', 'deeper'],
        ['src/deep/x.ts', 'x.ts'],
        ['src/main.ts', 'main.ts'],
      ],
    );
    assert.deepEqual(
      exchanges.filter((e) => e.path === `/sessions/${session.id}/files`).map((e) => e.search.toString()),
      ['', 'depth=2', 'path=src&depth=2'],
    );

    await assert.rejects(session.listFiles({ path: 'README.md' }), isProblem(409, 'wrong-file-kind'));
    await assert.rejects(session.listFiles({ path: 'missing' }), isProblem(404, 'file-not-found'));
    await assert.rejects(session.listFiles({ depth: 33 }), isProblem(400, 'invalid-parameter'));
  });

  it('deleteFile removes a file, a link and a directory; one that is not empty only with recursive', async () => {
    const { session, cwd } = await newSession();
    await session.writeFile('keep/a.txt', 'a');
    await session.writeFile('tree/one/two.txt', 'two');
    await mkdir(join(cwd, 'hollow'));
    await symlink('keep', join(cwd, 'to-keep'));

    assert.equal(await session.deleteFile('keep/a.txt'), undefined);
    await assert.rejects(lstat(join(cwd, 'keep', 'a.txt')), { code: 'ENOENT' });
    await session.deleteFile('to-keep');
    assert.ok((await stat(join(cwd, 'keep'))).isDirectory(), 'a link is deleted, never what it points to');
    await session.deleteFile('hollow');

    await assert.rejects(session.deleteFile('tree'), isProblem(409, 'directory-not-empty'));
    assert.equal(await readFile(join(cwd, 'tree', 'one', 'two.txt'), 'utf8'), 'two', 'nothing deleted');
    await client.deleteFile(session.id, 'tree', { recursive: true });
    await assert.rejects(lstat(join(cwd, 'tree')), { code: 'ENOENT' });
    assert.deepEqual(statuses(session, 'DELETE', ''), [204, 204, 204, 409, 204]);
    const last = exchanges.filter((e) => e.method === 'DELETE').at(-1);
    assert.equal(last?.search.toString(), 'recursive=true&path=tree');

    await assert.rejects(session.deleteFile('tree'), isProblem(404, 'file-not-found'));
    await assert.rejects(session.deleteFile('.'), isProblem(409, 'workspace-root'));
    assert.deepEqual((await session.listFiles()).entries.map((e) => e.path), ['keep']);
  });

  it('paths that leave the workspace are refused: `..` and absolute 400 invalid-path, a symlink out 403', async () => {
    const { session, cwd } = await newSession();
    const outside = await mkdtemp(join(root, 'outside-'));
    await writeFile(join(outside, 'secret'), 'secret');
    await symlink(outside, join(cwd, 'out'));

    for (const path of ['../x', 'a/../../x', '/etc/passwd']) {
      await assert.rejects(session.writeFile(path, 'x'), isProblem(400, 'invalid-path'), path);
      await assert.rejects(session.readFile(path), isProblem(400, 'invalid-path'), path);
      await assert.rejects(session.listFiles({ path }), isProblem(400, 'invalid-path'), path);
      await assert.rejects(session.deleteFile(path), isProblem(400, 'invalid-path'), path);
      await assert.rejects(session.uploadFiles(tar([{ type: 'file', name: 'f', content: 'f' }]), { path }), isProblem(400, 'invalid-path'), path);
      await assert.rejects(session.archiveFiles({ path }), isProblem(400, 'invalid-path'), path);
    }
    const escaped = (await session.readFile('../x').catch((e: unknown) => e)) as ProblemError;
    assert.match(escaped.detail, /\.\./);
    assert.equal(escaped.type, 'urn:sandbox-daemon:problem:invalid-path');

    await assert.rejects(session.readFile('out/secret'), isProblem(403, 'outside-workspace'));
    await assert.rejects(session.writeFile('out/new', 'x'), isProblem(403, 'outside-workspace'));
    await assert.rejects(session.listFiles({ path: 'out' }), isProblem(403, 'outside-workspace'));
    await assert.rejects(
      session.uploadFiles(tar([{ type: 'file', name: 'f', content: 'f' }]), { path: 'out' }),
      isProblem(403, 'outside-workspace'),
    );
    assert.deepEqual((await readdir(outside)).sort(), ['secret'], 'nothing written outside');
    assert.equal(await readFile(join(outside, 'secret'), 'utf8'), 'secret');
  });

  it('uploadFiles unpacks a tar and a tar.gz built here, each with its content type', async () => {
    const { session, cwd } = await newSession();
    const archive = tar([
      { type: 'directory', name: 'pkg/' },
      { type: 'file', name: 'pkg/a.txt', content: 'alpha\n' },
      { type: 'directory', name: 'pkg/sub/' },
      { type: 'file', name: 'pkg/sub/b.bin', content: allBytes(3), mode: 0o755 },
      { type: 'symlink', name: 'pkg/link', target: 'a.txt' },
    ]);
    const summary = await session.uploadFiles(archive);
    assert.deepEqual(summary, { path: '', files: 2, directories: 2, symlinks: 1, bytes: 6 + 768 });
    assert.equal(await readFile(join(cwd, 'pkg', 'a.txt'), 'utf8'), 'alpha\n');
    assert.deepEqual(new Uint8Array(await readFile(join(cwd, 'pkg', 'sub', 'b.bin'))), allBytes(3));
    assert.equal((await stat(join(cwd, 'pkg', 'sub', 'b.bin'))).mode & 0o777, 0o755);
    assert.equal(await readlink(join(cwd, 'pkg', 'link')), 'a.txt');

    // The same archive gzip-compressed, into a directory that does not exist yet.
    const gzipped = await client.uploadFiles(session.id, gzipSync(archive), { path: 'copy/here' });
    assert.deepEqual(gzipped, { path: 'copy/here', files: 2, directories: 2, symlinks: 1, bytes: 774 });
    assert.equal(await readFile(join(cwd, 'copy', 'here', 'pkg', 'a.txt'), 'utf8'), 'alpha\n');
    // As a Blob and as a stream.
    await session.uploadFiles(new Blob([gzipSync(tar([{ type: 'file', name: 'blob.txt', content: 'blob' }]))]));
    await session.uploadFiles(new Blob([tar([{ type: 'file', name: 'stream.txt', content: 'stream' }])]).stream());
    assert.equal(await readFile(join(cwd, 'blob.txt'), 'utf8'), 'blob');
    assert.equal(await readFile(join(cwd, 'stream.txt'), 'utf8'), 'stream');

    const uploads = exchanges.filter((e) => e.path === `/sessions/${session.id}/files/upload`);
    assert.deepEqual(
      uploads.map((e) => [e.status, e.requestHeaders.get('content-type')]),
      [
        [201, 'application/x-tar'],
        [201, 'application/gzip'],
        [201, 'application/gzip'],
        [201, 'application/octet-stream'],
      ],
    );
  });

  it('uploadFiles refuses an entry that escapes (nothing written) and bytes that are no archive (422)', async () => {
    const { session, cwd } = await newSession();
    const escaping = tar([
      { type: 'file', name: 'fine.txt', content: 'fine' },
      { type: 'file', name: '../escaped.txt', content: 'x' },
    ]);
    await assert.rejects(session.uploadFiles(escaping), isProblem(422, 'archive-entry-refused'));
    await assert.rejects(
      session.uploadFiles(tar([{ type: 'symlink', name: 'out', target: '../../..' }])),
      isProblem(422, 'archive-entry-refused'),
    );
    await assert.rejects(
      session.uploadFiles(tar([{ type: 'hardlink', name: 'hard', target: '/etc/passwd' }])),
      isProblem(422, 'archive-entry-refused'),
    );
    assert.deepEqual((await session.listFiles()).entries, [], 'nothing was written');
    await assert.rejects(lstat(join(cwd, '..', 'escaped.txt')), { code: 'ENOENT' });
    await assert.rejects(session.uploadFiles(new TextEncoder().encode('not an archive')), isProblem(422, 'invalid-archive'));
    await assert.rejects(session.uploadFiles(gzipSync('not a tar either, but gzip')), isProblem(422, 'invalid-archive'));
  });

  it('archiveFiles answers a tar.gz and parses its headers: counts and decoded skipped paths', async () => {
    const { session, cwd } = await newSession();
    await session.writeFile('src/main.ts', 'export {};\n');
    await session.writeFile('big, file é.bin', allBytes(2)); // 512 bytes: over maxFileBytes below
    await session.writeFile('.git/HEAD', 'ref: refs/heads/main\n');
    await session.writeFile('node_modules/dep/index.js', 'module.exports = 1;\n');
    await session.writeFile('.gitignore', 'ignored.log\n');
    await session.writeFile('ignored.log', 'noise\n');
    await symlink('src/main.ts', join(cwd, 'main-link'));

    const snapshot = await session.archiveFiles({ maxFileBytes: 100 });
    assert.deepEqual(
      { files: snapshot.files, bytes: snapshot.bytes, skipped: snapshot.skipped, skippedPaths: snapshot.skippedPaths },
      { files: 2, bytes: 11 + 12, skipped: 1, skippedPaths: ['big, file é.bin'] },
    );
    assert.deepEqual([...snapshot.data.subarray(0, 2)], [0x1f, 0x8b], 'gzip');
    const entries = untar(gunzipSync(snapshot.data));
    const named = Object.fromEntries(entries.map((e) => [e.name.replace(/\/$/, ''), e]));
    assert.deepEqual(Object.keys(named).sort(), ['.gitignore', 'main-link', 'src', 'src/main.ts']);
    assert.equal(text(named['src/main.ts']?.content ?? new Uint8Array()), 'export {};\n');
    assert.equal(named['main-link']?.type, 'symlink');
    assert.equal(named['main-link']?.target, 'src/main.ts');

    const everything = await client.archiveFiles(session.id, { all: true });
    assert.deepEqual(everything.skippedPaths, []);
    assert.equal(everything.skipped, 0);
    const all = untar(gunzipSync(everything.data)).map((e) => e.name.replace(/\/$/, ''));
    for (const name of ['.git/HEAD', 'node_modules/dep/index.js', 'ignored.log', 'big, file é.bin']) {
      assert.ok(all.includes(name), `${name} in ${all.join(', ')}`);
    }
    assert.equal(everything.files, 6);

    const sub = untar(gunzipSync((await session.archiveFiles({ path: 'src' })).data)).map((e) => e.name);
    assert.deepEqual(sub, ['main.ts'], 'entries are named relative to the directory');

    const archives = exchanges.filter((e) => e.path === `/sessions/${session.id}/files/archive`);
    assert.deepEqual(archives.map((e) => e.search.toString()), ['maxFileBytes=100', 'all=true', 'path=src']);
    await assert.rejects(session.archiveFiles({ maxBytes: 10 }), isProblem(409, 'archive-too-large'));
    await assert.rejects(session.archiveFiles({ path: 'src/main.ts' }), isProblem(409, 'wrong-file-kind'));
  });

  it('a session that does not exist is a 404 session-not-found', async () => {
    const id = uniqueId('nobody');
    await assert.rejects(client.listFiles(id), isProblem(404, 'session-not-found'));
    await assert.rejects(client.readFile(id, 'x'), isProblem(404, 'session-not-found'));
    await assert.rejects(client.writeFile(id, 'x', 'x'), isProblem(404, 'session-not-found'));
  });
});

describe('uploadFiles on a --no-token daemon', () => {
  let daemon: NoTokenDaemon;
  let cwd: string;
  let client: SandboxDaemon;

  before(async () => {
    daemon = await startNoTokenDaemon();
    cwd = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-notoken-ws-')));
    client = new SandboxDaemon({ baseUrl: daemon.baseUrl, validate: true });
  });
  after(async () => {
    await daemon.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it('takes the tar, gzip and octet-stream types the client sends, and refuses JSON (415)', async () => {
    const session = await client.startSession(uniqueId('notoken'), { agent: 'mock', cwd });
    const archive = tar([{ type: 'file', name: 'a.txt', content: 'a' }]);
    assert.equal((await session.uploadFiles(archive)).files, 1);
    assert.equal((await session.uploadFiles(gzipSync(archive))).files, 1);
    assert.equal((await session.uploadFiles(new Blob([archive]).stream())).files, 1);
    assert.equal((await session.writeFile('b.txt', 'b')).size, 1, 'a PUT of any type');
    assert.equal(text(await session.readFile('a.txt')), 'a');
    await assert.rejects(
      session.uploadFiles(archive, {}, { headers: { 'content-type': 'application/json' } }),
      isProblem(415, 'unsupported-media-type'),
    );
    await assert.rejects(
      session.uploadFiles(archive, {}, { headers: { 'content-type': 'text/plain' } }),
      isProblem(415, 'unsupported-media-type'),
    );
  });
});

describe('files on the wire (fake fetch)', () => {
  /** A client whose fetch answers `answer(request)` and records the requests. */
  function fake(answer: (url: URL, init: RequestInit | undefined) => Response) {
    const requests: Array<{ url: URL; init: RequestInit | undefined }> = [];
    const client = new InlineSandboxDaemon({
      baseUrl: 'http://daemon.test/',
      fetch: async (input, init) => {
        const url = new URL(String(input));
        requests.push({ url, init });
        return answer(url, init);
      },
    });
    return { client, requests };
  }

  it('readFile cuts the range itself when the answer is the whole file (200)', async () => {
    const { client, requests } = fake(() => new Response(allBytes(), { status: 200 }));
    assert.deepEqual(await client.readFile('s', 'f', { range: { start: 250 } }), allBytes().subarray(250));
    assert.deepEqual(await client.readFile('s', 'f', { range: { start: 1, end: 2 } }), Uint8Array.of(1, 2));
    assert.deepEqual(await client.readFile('s', 'f', { range: { suffix: 2 } }), Uint8Array.of(254, 255));
    assert.deepEqual(await client.readFile('s', 'f'), allBytes());
    assert.equal(requests[0]?.url.href, 'http://daemon.test/sessions/s/files/content?path=f');
    assert.equal(new Headers(requests[0]?.init?.headers).get('range'), 'bytes=250-');
    assert.equal(new Headers(requests[3]?.init?.headers).get('range'), null);
    assert.equal(new Headers(requests[3]?.init?.headers).get('accept'), '*/*', 'bytes, or a problem');
  });

  it('archiveFiles decodes skipped paths, and leaves out counts whose headers are missing', async () => {
    const headers = {
      'x-archive-files': '3',
      'x-archive-bytes': '1234',
      'x-archive-skipped': '3',
      'x-archive-skipped-paths': 'a%20b%2Cc%25d/%C3%A9,plain.txt,%E2%9C%93',
    };
    const { client } = fake(() => new Response(Uint8Array.of(0x1f, 0x8b), { status: 200, headers }));
    const archive = await client.archiveFiles('s', { all: true });
    assert.deepEqual(
      { ...archive, data: [...archive.data] },
      { data: [0x1f, 0x8b], files: 3, bytes: 1234, skipped: 3, skippedPaths: ['a b,c%d/é', 'plain.txt', '✓'] },
    );
    const bare = await fake(() => new Response(new Uint8Array(), { status: 200 })).client.archiveFiles('s');
    assert.deepEqual(bare, { data: new Uint8Array(), files: undefined, bytes: undefined, skipped: undefined, skippedPaths: undefined });
    const broken = fake(() => new Response(new Uint8Array(), { status: 200, headers: { 'x-archive-files': 'many' } })).client;
    await assert.rejects(broken.archiveFiles('s'), { name: 'ProtocolError' });
  });

  it('writeFile and uploadFiles send their bodies as they are; an archive as gzip or tar by its first bytes', async () => {
    const { client, requests } = fake(() => new Response('{}', { status: 201, headers: { 'content-type': 'application/json' } }));
    await client.writeFile('s', 'dir/f.txt', 'héllo');
    await client.uploadFiles('s', Uint8Array.of(0x1f, 0x8b, 8), { path: 'into' });
    await client.uploadFiles('s', new Blob([Uint8Array.of(0x1f, 0x8b)], { type: 'application/x-gzip' }));
    await client.uploadFiles('s', new Blob([Uint8Array.of(0x1f, 0x8b)]).stream());
    await client.uploadFiles('s', new Blob([new Uint8Array(512)]));
    await client.uploadFiles('s', new Uint8Array(512).buffer);
    const seen = requests.map((r) => [r.init?.method, r.url.pathname + r.url.search, new Headers(r.init?.headers).get('content-type')]);
    assert.deepEqual(seen, [
      ['PUT', '/sessions/s/files/content?path=dir%2Ff.txt', 'application/octet-stream'],
      ['POST', '/sessions/s/files/upload?path=into', 'application/gzip'],
      ['POST', '/sessions/s/files/upload', 'application/gzip'],
      ['POST', '/sessions/s/files/upload', 'application/octet-stream'],
      ['POST', '/sessions/s/files/upload', 'application/x-tar'],
      ['POST', '/sessions/s/files/upload', 'application/x-tar'],
    ]);
    assert.equal(requests[0]?.init?.body, 'héllo', 'text is sent as it is (fetch encodes it as UTF-8)');
    assert.ok(requests[3]?.init?.body instanceof ReadableStream);
    assert.equal((requests[3]?.init as { duplex?: string }).duplex, 'half', 'a stream is sent with duplex: half');
    assert.equal((requests[1]?.init as { duplex?: string }).duplex, undefined);
  });
});
