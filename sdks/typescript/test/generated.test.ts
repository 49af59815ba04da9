// The generated files: up to date with spec/openapi.json, and the drift check (and the
// validator emitter) fail loudly when they would not be.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packageRoot } from './helpers.js';

const generator = join(packageRoot, 'scripts', 'generate.mjs');
const specPath = join(packageRoot, '..', '..', 'spec', 'openapi.json');
const temp = mkdtempSync(join(tmpdir(), 'sdk-generated-test-'));

/** The parts of the spec the tests change. */
interface Spec {
  components: { schemas: Record<string, { description?: string; properties: Record<string, Record<string, unknown>> }> };
  paths: Record<string, unknown>;
}

/** Runs the generator with `args`, optionally on a modified copy of the spec. */
function generate(args: string[], modify?: (spec: Spec) => void): { status: number | null; output: string } {
  const env = { ...process.env };
  if (modify) {
    const spec = JSON.parse(readFileSync(specPath, 'utf8')) as Spec;
    modify(spec);
    const path = join(temp, `spec-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(spec));
    env.SANDBOX_DAEMON_SPEC = path;
  }
  const result = spawnSync(process.execPath, [generator, ...args], { cwd: packageRoot, env, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('generated files', () => {
  after(() => rmSync(temp, { recursive: true, force: true }));

  it('are up to date with spec/openapi.json', () => {
    const { status, output } = generate(['--check']);
    assert.equal(status, 0, output);
    assert.match(output, /up to date/);
  });

  it('the drift check fails on a changed description, naming the stale files', () => {
    const { status, output } = generate(['--check'], (spec) => {
      const schema = spec.components.schemas.SessionInfo;
      assert.ok(schema);
      schema.description = 'Changed upstream.';
    });
    assert.equal(status, 1, output);
    assert.match(output, /src\/generated\/openapi\.ts: differs/);
    assert.match(output, /src\/generated\/validators\.ts: differs/);
    assert.match(output, /npm run generate/);
  });

  it('the drift check fails on a new operation (routes and types)', () => {
    const { status, output } = generate(['--check'], (spec) => {
      spec.paths['/sessions/{sessionId}/fork'] = {
        post: {
          operationId: 'forkSession',
          parameters: [{ in: 'path', name: 'sessionId', required: true, schema: { type: 'string' } }],
          responses: { '204': { description: 'Forked' } },
        },
      };
    });
    assert.equal(status, 1, output);
    assert.match(output, /src\/generated\/routes\.ts: differs/);
  });

  it('the validator emitter refuses a keyword it does not know, with its location', () => {
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const version = spec.components.schemas.HealthResponse?.properties.version;
      assert.ok(version);
      version.not = { const: '' };
    });
    assert.notEqual(status, 0);
    assert.match(output, /#\/components\/schemas\/HealthResponse\/properties\/version: unsupported keyword `not`/);
  });

  it('the validator emitter refuses success statuses that answer different bodies', () => {
    // putCredential answers 201 (stored) or 200 (replaced), both a StoredLoginInfo: one validator.
    const validators = readFileSync(join(packageRoot, 'src', 'generated', 'validators.ts'), 'utf8');
    assert.match(validators, /\n {2}putCredential: StoredLoginInfoSchema,\n/);
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const paths = spec.paths as Record<string, { put: { responses: Record<string, { content: unknown }> } }>;
      const put = paths['/credentials/{agent}']?.put;
      assert.ok(put?.responses['200']);
      put.responses['200'].content = { 'application/json': { schema: { $ref: '#/components/schemas/HealthResponse' } } };
    });
    assert.notEqual(status, 0);
    assert.match(output, /putCredential: the success statuses 200, 201 answer different content/);
  });

  it('bodies of bytes (a file, a tar.gz) get no validator; any other content stops generation', () => {
    const validators = readFileSync(join(packageRoot, 'src', 'generated', 'validators.ts'), 'utf8');
    assert.match(validators, /\n {2}readFile: null,\n/);
    assert.match(validators, /\n {2}archiveFiles: null,\n/);
    assert.match(validators, /\n {2}writeFile: FileEntrySchema,\n/);
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const paths = spec.paths as Record<string, { get: { responses: Record<string, { content: unknown }> } }>;
      const read = paths['/sessions/{sessionId}/files/content']?.get;
      assert.ok(read?.responses['200'] && read.responses['206']);
      read.responses['200'].content = { 'text/html': { schema: { type: 'string' } } };
      read.responses['206'].content = read.responses['200'].content;
    });
    assert.notEqual(status, 0);
    assert.match(output, /readFile: unsupported success content text\/html/);
  });

  it('install progress frames are generated from the itemSchema: a type and its validator', () => {
    // (That they follow the spec is the up-to-date check above.)
    const streams = readFileSync(join(packageRoot, 'src', 'generated', 'streams.ts'), 'utf8');
    assert.match(streams, /export type InstallAgentFrame =\n {2}\| \{ event: "progress"; data: Schemas\["InstallProgress"\] \}/);
    assert.match(streams, /\| \{ event: "error"; data: Schemas\["ProblemDetails"\] \};/);
    const validators = readFileSync(join(packageRoot, 'src', 'generated', 'validators.ts'), 'utf8');
    assert.match(validators, /export const InstallAgentFrameSchema: z\.ZodType<InstallAgentFrame> = z\.discriminatedUnion\("event"/);
    assert.match(validators, /streamFrameSchemas: \{\n {2}readonly installAgent: typeof InstallAgentFrameSchema;/);
  });

  it('an event stream the spec describes only as text (processLogs) gets no frame type or validator; no description at all stops generation', () => {
    const streams = readFileSync(join(packageRoot, 'src', 'generated', 'streams.ts'), 'utf8');
    assert.doesNotMatch(streams, /processLogs|ProcessLogs/);
    const validators = readFileSync(join(packageRoot, 'src', 'generated', 'validators.ts'), 'utf8');
    assert.match(validators, /\n {2}processLogs: ProcessLogsSchema,\n/, 'its JSON page is validated');
    assert.doesNotMatch(validators, /ProcessLogsFrame/);
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const media = processLogsStream(spec);
      assert.deepEqual(media.schema, { type: 'string' });
      media.schema = { type: 'object' };
    });
    assert.notEqual(status, 0);
    assert.match(output, /processLogs: text\/event-stream itemSchema is missing/);
  });

  it('an operation that only switches protocols (openTerminal, a WebSocket) gets no validator; no success status at all stops generation', () => {
    const validators = readFileSync(join(packageRoot, 'src', 'generated', 'validators.ts'), 'utf8');
    assert.match(validators, /\n {2}openTerminal: null,\n/);
    assert.match(validators, /\n {2}createTerminalTicket: TerminalTicketSchema,\n/);
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const responses = terminalResponses(spec);
      assert.ok(responses['101']);
      delete responses['101'];
    });
    assert.notEqual(status, 0);
    assert.match(output, /openTerminal: no success status/);
  });

  it('the emitter refuses a stream frame whose event is not a constant, with its location', () => {
    const { status, output } = generate(['--out', join(temp, 'out')], (spec) => {
      const frames = installFrames(spec);
      const first = frames[0] as { properties: { event: Record<string, unknown> } };
      first.properties.event = { type: 'string' };
    });
    assert.notEqual(status, 0);
    assert.match(output, /installAgent: text\/event-stream itemSchema\/oneOf\/0: `event` must be a required constant/);
  });
});

/** The `text/event-stream` media type of processLogs in a copy of the spec. */
function processLogsStream(spec: Spec): { schema?: unknown } {
  const paths = spec.paths as Record<string, { get: { responses: Record<string, { content: Record<string, { schema?: unknown }> }> } }>;
  const media = paths['/sessions/{sessionId}/processes/{processId}/logs']?.get.responses['200']?.content['text/event-stream'];
  assert.ok(media);
  return media;
}

/** The responses of openTerminal (the terminal's WebSocket) in a copy of the spec. */
function terminalResponses(spec: Spec): Record<string, unknown> {
  const paths = spec.paths as Record<string, { get: { responses: Record<string, unknown> } }>;
  const responses = paths['/sessions/{sessionId}/processes/{processId}/terminal']?.get.responses;
  assert.ok(responses);
  return responses;
}

/** The frames (`oneOf`) of installAgent's event stream in a copy of the spec. */
function installFrames(spec: Spec): unknown[] {
  const paths = spec.paths as Record<string, { post: { responses: Record<string, { content: Record<string, { itemSchema: { oneOf: unknown[] } }> }> } }>;
  const frames = paths['/agents/{agent}/install']?.post.responses['200']?.content['text/event-stream']?.itemSchema.oneOf;
  assert.ok(frames && frames.length === 3);
  return frames;
}
