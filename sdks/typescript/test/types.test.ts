// Type-level guarantees, checked by `tsc` (npm run typecheck) and exercised at run time:
// events narrow on `type`, every operation has a method, wire types come from the spec.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  ChangeCounts,
  EventData,
  EventOf,
  EventType,
  InstallFrame,
  InstallProgress,
  InstallRequest,
  InstallResponse,
  OperationId,
  ProcessInfo,
  ProcessLogFrame,
  ProcessOutput,
  ProcessRequest,
  RequestBody,
  ResponseBody,
  SessionBundle,
  SessionExport,
  StoredLoginInfo,
  Terminal,
  TerminalExit,
  TerminalMessage,
  TerminalTicket,
  TurnChanges,
  TurnEnded,
  UniversalEvent,
} from 'sandbox-daemon';
import { SandboxDaemon } from 'sandbox-daemon';

/** One line per event, reading fields only the narrowed type has. */
function summary(event: UniversalEvent): string {
  switch (event.type) {
    case 'sessionStarted':
      return `started ${event.data.agent}`;
    case 'sessionEnded':
      return `ended ${event.data.reason}`;
    case 'turnStarted':
      return `turn ${event.data.turnId}`;
    case 'turnEnded':
      return `turn ${event.data.turnId} ${event.data.stopReason}`;
    case 'itemStarted':
    case 'itemCompleted':
      return `${event.type} ${event.data.item.kind}`;
    case 'itemDelta':
      return `delta ${event.data.delta}`;
    case 'error':
      return `error ${event.data.type}: ${event.data.message}`;
    case 'permissionAsked':
      return `permission ${event.data.permissionId}`;
    case 'permissionResolved':
      return `resolved ${event.data.outcome}`;
    case 'questionAsked':
      return `questions ${event.data.questions.length}`;
    case 'questionResolved':
      return `answered ${event.data.outcome}`;
    case 'toolCallRequested':
      return `tool ${event.data.tool} ${event.data.callId}`;
    case 'toolCallResolved':
      return `tool ${event.data.callId} ${event.data.outcome}`;
    case 'sessionHandedOver':
      return `handed over ${event.data.fromAgent} -> ${event.data.toAgent} (${event.data.turns} turns)`;
    case 'unknown':
      return `unknown ${event.data.storedType}`;
    default:
      return exhaustive(event);
  }
}

/** Fails to compile when a `case` is missing above. */
function exhaustive(event: never): never {
  throw new Error(`unhandled event ${JSON.stringify(event)}`);
}

// @ts-expect-error a turnStarted payload has no permissionId
const wrongField = (event: EventOf<'turnStarted'>): unknown => event.data.permissionId;
// @ts-expect-error not an event type
const wrongType: EventType = 'permissionGranted';

/** Compile-time parity: every operationId is a method of the client. */
type MissingMethods = Exclude<OperationId, keyof SandboxDaemon>;
const parity: [MissingMethods] extends [never] ? true : MissingMethods = true;

/** Compile-time: return types come from the spec's success responses. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const healthType: Equal<Awaited<ReturnType<SandboxDaemon['health']>>, ResponseBody<'health'>> = true;
const deleteType: Equal<Awaited<ReturnType<SandboxDaemon['deleteSession']>>, void> = true;
const payloadType: Equal<EventData<'itemDelta'>, { itemId: string; delta: string }> = true;

/** Compile-time: an export is the bundle's text and its parsed form; import and handover answer SessionInfo. */
const exportType: Equal<Awaited<ReturnType<SandboxDaemon['exportSession']>>, SessionExport> = true;
const bundleType: Equal<SessionExport['bundle'], SessionBundle> = true;
const importType: Equal<Awaited<ReturnType<SandboxDaemon['importSession']>>, ResponseBody<'importSession'>> = true;
const handoverBody: Equal<Parameters<SandboxDaemon['handoverSession']>[1], RequestBody<'handoverSession'>> = true;

/** Compile-time: stored logins are described by StoredLoginInfo; a put takes exactly one of `login` and `token`. */
const putBody: Equal<Parameters<SandboxDaemon['putCredential']>[1], RequestBody<'putCredential'>> = true;
const putType: Equal<Awaited<ReturnType<SandboxDaemon['putCredential']>>, StoredLoginInfo> = true;
const getCredentialType: Equal<Awaited<ReturnType<SandboxDaemon['getCredential']>>, StoredLoginInfo> = true;
const deleteCredentialType: Equal<Awaited<ReturnType<SandboxDaemon['deleteCredential']>>, void> = true;
const putLogin = (daemon: SandboxDaemon): unknown => daemon.putCredential('codex', { login: { tokens: { access_token: 'a' } } });
const putToken = (daemon: SandboxDaemon): unknown => daemon.putCredential('claude', { token: 'sk-ant-oat01-…', source: 'setup-token' });
// @ts-expect-error neither `login` nor `token`
const putNeither = (daemon: SandboxDaemon): unknown => daemon.putCredential('codex', { source: 'nowhere' });
// @ts-expect-error not an agent
const putUnknown = (daemon: SandboxDaemon): unknown => daemon.getCredential('cursor');

/** Compile-time: installAgent takes the spec's InstallRequest; its stream yields typed frames. */
const installBody: Equal<Parameters<SandboxDaemon['installAgent']>[1], InstallRequest | undefined> = true;
const installStreamBody: Equal<Parameters<SandboxDaemon['installAgentProgress']>[1], InstallRequest | undefined> = true;
const installFrame: Equal<
  InstallFrame,
  { event: 'progress'; data: InstallProgress } | { event: 'installed'; data: InstallResponse }
> = true;
// @ts-expect-error InstallRequest has no `versoin`
const installTypo = (daemon: SandboxDaemon): unknown => daemon.installAgent('amp', { versoin: '1.0.0' });
// @ts-expect-error not an agent
const installUnknown = (daemon: SandboxDaemon): unknown => daemon.installAgentProgress('cursor');

/** Compile-time: processes take the spec's ProcessRequest and answer its types; a follow yields typed frames. */
const runType: Equal<Awaited<ReturnType<SandboxDaemon['runProcess']>>, ProcessOutput> = true;
const startBody: Equal<Parameters<SandboxDaemon['startProcess']>[1], ProcessRequest> = true;
const stopType: Equal<Awaited<ReturnType<SandboxDaemon['stopProcess']>>, ProcessInfo> = true;
const deleteProcessType: Equal<Awaited<ReturnType<SandboxDaemon['deleteProcess']>>, void> = true;
const followType: Equal<ReturnType<SandboxDaemon['followProcessLogs']> extends AsyncIterable<infer F> ? F : never, ProcessLogFrame> = true;
// @ts-expect-error a page is not a follow: `followProcessLogs` streams
const pageFollow = (daemon: SandboxDaemon): unknown => daemon.processLogs('s', 'p1', { follow: true });
// @ts-expect-error ProcessRequest has no `argv`
const startTypo = (daemon: SandboxDaemon): unknown => daemon.startProcess('s', { command: 'ls', argv: ['-l'] });

/** Compile-time: a terminal is minted a TerminalTicket and opens as a Terminal; a turn's changes are TurnChanges. */
const ticketType: Equal<Awaited<ReturnType<SandboxDaemon['createTerminalTicket']>>, TerminalTicket> = true;
const terminalType: Equal<Awaited<ReturnType<SandboxDaemon['openTerminal']>>, Terminal> = true;
const terminalOutput: Equal<Terminal extends AsyncIterable<infer B> ? B : never, Uint8Array> = true;
const terminalExit: Equal<Awaited<Terminal['exit']>, TerminalExit> = true;
const changesType: Equal<Awaited<ReturnType<SandboxDaemon['turnChanges']>>, TurnChanges> = true;
const endedChanges: Equal<TurnEnded['changes'], ChangeCounts | null | undefined> = true;
const startTty = (daemon: SandboxDaemon): unknown => daemon.startProcess('s', { command: 'bash', tty: true, size: { cols: 80, rows: 24 } });
// @ts-expect-error a size has `cols` and `rows`
const sizeTypo = (daemon: SandboxDaemon): unknown => daemon.startProcess('s', { command: 'bash', tty: true, size: { columns: 80, rows: 24 } });
// @ts-expect-error a terminal's size is two numbers
const resizeTypo = (terminal: Terminal): unknown => terminal.resize({ cols: 80, rows: 24 });

/** A line per terminal message, reading fields only the narrowed message has. */
function terminalLine(message: TerminalMessage): string {
  switch (message.type) {
    case 'input':
      return `input ${message.data}`;
    case 'resize':
      return `resize ${message.cols}x${message.rows}`;
    case 'exit':
      return `exit ${message.exitCode ?? `by signal ${message.signal ?? '?'}`}`;
    case 'error':
      return `error ${message.message}`;
  }
}

/** A line per log frame, reading fields only the narrowed frame has. */
function logLine(frame: ProcessLogFrame): string {
  switch (frame.event) {
    case 'log':
      return `${frame.data.sequence} ${frame.data.stream}: ${frame.data.data}`;
    case 'gap':
      return `dropped ${frame.data.from}–${frame.data.to}`;
    case 'exit':
      return `exited ${frame.data.exitCode ?? `by signal ${frame.data.signal ?? '?'}`}`;
  }
}

/** A line per frame, reading fields only the narrowed frame (and phase) has. */
function progressLine(frame: InstallFrame): string {
  if (frame.event === 'installed') return `installed ${frame.data.version ?? '?'} (${frame.data.size} bytes)`;
  switch (frame.data.phase) {
    case 'waiting':
      return 'waiting';
    case 'resolving':
      return `resolving ${frame.data.requested}`;
    case 'downloading':
      return `${frame.data.url}: ${frame.data.bytes}/${frame.data.total ?? '?'}`;
    case 'verifying':
      return `verifying ${frame.data.version}`;
  }
}

describe('types', () => {
  it('narrow event data on type', () => {
    const base = { sequence: 1, time: '2026-01-01T00:00:00Z', sessionId: 's', source: 'daemon', synthetic: true } as const;
    const events: UniversalEvent[] = [
      { ...base, type: 'turnStarted', data: { turnId: 'turn_1' } },
      { ...base, type: 'itemDelta', data: { itemId: 'itm_1', delta: 'hi' } },
      { ...base, type: 'permissionAsked', data: { permissionId: 'perm_1', kind: 'command', title: 'Run' } },
      { ...base, type: 'turnEnded', data: { turnId: 'turn_1', stopReason: 'completed' } },
    ];
    assert.deepEqual(events.map(summary), ['turn turn_1', 'delta hi', 'permission perm_1', 'turn turn_1 completed']);
    assert.throws(() => exhaustive(events[0] as never));
  });

  it('hold the compile-time checks', () => {
    assert.equal(parity, true);
    assert.equal(healthType && deleteType && payloadType, true);
    assert.equal(exportType && bundleType && importType && handoverBody, true);
    assert.equal(putBody && putType && getCredentialType && deleteCredentialType, true);
    assert.equal([putLogin, putToken, putNeither, putUnknown].every((f) => typeof f === 'function'), true);
    assert.equal(typeof wrongField, 'function');
    assert.equal(wrongType, 'permissionGranted');
    assert.equal(installBody && installStreamBody && installFrame, true);
    assert.equal(typeof installTypo, 'function');
    assert.equal(typeof installUnknown, 'function');
    assert.equal(runType && startBody && stopType && deleteProcessType && followType, true);
    assert.equal([pageFollow, startTypo].every((f) => typeof f === 'function'), true);
    assert.equal(ticketType && terminalType && terminalOutput && terminalExit && changesType && endedChanges, true);
    assert.equal([startTty, sizeTypo, resizeTypo].every((f) => typeof f === 'function'), true);
  });

  it('narrow terminal messages on type', () => {
    const messages: TerminalMessage[] = [
      { type: 'input', data: 'ls\r' },
      { type: 'resize', cols: 80, rows: 24 },
      { type: 'exit', exitCode: 3 },
      { type: 'exit', signal: 9 },
      { type: 'error', message: 'bad' },
    ];
    assert.deepEqual(messages.map(terminalLine), ['input ls\r', 'resize 80x24', 'exit 3', 'exit by signal 9', 'error bad']);
  });

  it('narrow process log frames on event', () => {
    const info: ProcessInfo = {
      processId: 'p1',
      pid: 7,
      command: 'sh',
      args: [],
      cwd: '',
      status: 'exited',
      signal: 15,
      startedAt: '2026-01-01T00:00:00Z',
      lastSequence: 2,
      tty: false,
    };
    const frames: ProcessLogFrame[] = [
      { event: 'log', data: { sequence: 1, stream: 'stderr', data: 'oops', time: '2026-01-01T00:00:00Z' } },
      { event: 'gap', data: { from: 2, to: 2 } },
      { event: 'exit', data: info },
    ];
    assert.deepEqual(frames.map(logLine), ['1 stderr: oops', 'dropped 2–2', 'exited by signal 15']);
  });

  it('narrow install frames on event, and progress on phase', () => {
    const frames: InstallFrame[] = [
      { event: 'progress', data: { phase: 'resolving', requested: 'latest' } },
      { event: 'progress', data: { phase: 'downloading', version: '2.0.0', url: 'u', bytes: 5, total: null } },
      { event: 'installed', data: { agent: 'amp', alreadyInstalled: false, version: '2.0.0', size: 5, durationMs: 1 } },
    ];
    assert.deepEqual(frames.map(progressLine), ['resolving latest', 'u: 5/?', 'installed 2.0.0 (5 bytes)']);
  });
});
