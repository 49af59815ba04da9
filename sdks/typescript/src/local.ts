/**
 * `sandbox-daemon/local` (Node only): starts a private daemon process and hands back a
 * client of it. The daemon listens on a free loopback port (`--port 0`), gets a random
 * token through `SANDBOX_DAEMON_TOKEN` (never on its command line, where every local user
 * could read it) and a temporary `--data-dir`; `close()` stops it and removes that dir.
 *
 * ```ts
 * await using daemon = await SandboxDaemon.start();
 * const session = await daemon.startSession('demo', { agent: 'mock' });
 * ```
 *
 * @module
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SandboxDaemon as ValidatingSandboxDaemon, type SandboxDaemonOptions } from './index.js';

export * from './index.js';
export * from './webhooks.js';

/** Options of `SandboxDaemon.start` / `startLocal`. */
export interface StartOptions extends Omit<SandboxDaemonOptions, 'baseUrl' | 'token'> {
  /** The daemon binary: default `SANDBOX_DAEMON_BIN`, else `sandbox-daemon` on `PATH`. */
  readonly binary?: string;
  /** Extra environment for the daemon (an `undefined` value removes an inherited variable). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Extra command-line arguments, after the SDK's own (`--host`, `--port 0`, `--data-dir`). */
  readonly args?: readonly string[];
  /** Use this data dir (kept on close) instead of a fresh temporary one (removed on close). */
  readonly dataDir?: string;
  /** The token to require (default: 32 random bytes, hex). */
  readonly token?: string;
  /** The address to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** How long to wait for the daemon to answer `/health`, in ms (default 20000). */
  readonly startTimeoutMs?: number;
  /** Receives each line the daemon writes, once it runs (default: kept in `logs` only). */
  readonly onLog?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/** The line the daemon prints once it listens (on stderr; stdout is watched too). */
const LISTENING = /listening on (https?:\/\/\S+)/;
/** Lines of output kept for error messages and `logs`. */
const KEPT_LINES = 200;

/**
 * Every daemon started here and still running, with its temporary data dir (if it owns
 * one): stopped (and the dir removed) if this process ends first.
 */
const running = new Map<ChildProcess, string | undefined>();
let exitHookInstalled = false;

/**
 * Stops the daemons (and removes their temporary data dirs) when this process exits, and
 * when it is told to stop by SIGINT, SIGTERM or SIGHUP: the daemons get SIGTERM, then,
 * unless the program handles that signal itself, the signal is raised again so the process
 * ends as it would have.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [child, tempDir] of running) {
      child.kill('SIGKILL');
      if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      for (const [child, tempDir] of running) {
        child.kill('SIGTERM');
        if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
      }
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** A client of one sandbox-daemon, which can also start a private daemon (`SandboxDaemon.start`). */
export class SandboxDaemon extends ValidatingSandboxDaemon {
  /** Starts a private daemon and returns a client of it; `close()` (or `await using`) stops it. */
  static start(options: StartOptions = {}): Promise<LocalSandboxDaemon> {
    return startLocal(options);
  }
}

/** What the client knows of the process it started. */
interface LocalProcess {
  /** The daemon process. */
  readonly child: ChildProcess;
  /** The token it requires. */
  readonly token: string;
  /** Its data dir. */
  readonly dataDir: string;
  /** Whether the data dir is a temporary one to remove on close. */
  readonly ownsDataDir: boolean;
  /** Its last lines of output. */
  readonly logs: string[];
  /** Resolves once the process has exited and its pipes closed. */
  readonly exited: Promise<void>;
}

/** A client of a daemon this process started; stop it with `close()`. */
export class LocalSandboxDaemon extends SandboxDaemon implements AsyncDisposable {
  readonly #local: LocalProcess;
  #closing: Promise<void> | undefined;

  /** Use `SandboxDaemon.start` / `startLocal`. */
  constructor(options: SandboxDaemonOptions, local: LocalProcess) {
    super(options);
    this.#local = local;
  }

  /** The bearer token the daemon requires. */
  get token(): string {
    return this.#local.token;
  }

  /** The daemon's process id. */
  get pid(): number | undefined {
    return this.#local.child.pid;
  }

  /** The daemon's data dir. */
  get dataDir(): string {
    return this.#local.dataDir;
  }

  /** The last lines the daemon wrote (stdout and stderr). */
  get logs(): readonly string[] {
    return this.#local.logs;
  }

  /** Whether the daemon process is still running. */
  get running(): boolean {
    const { child } = this.#local;
    return child.exitCode === null && child.signalCode === null;
  }

  /** Stops the daemon (SIGTERM, SIGKILL after 5 s) and removes a temporary data dir. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  /** The same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #stop(): Promise<void> {
    const { child, exited, dataDir, ownsDataDir } = this.#local;
    if (this.running) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

/** Starts a private daemon and returns a client of it (the same as `SandboxDaemon.start`). */
export async function startLocal(options: StartOptions = {}): Promise<LocalSandboxDaemon> {
  const {
    binary = process.env.SANDBOX_DAEMON_BIN || 'sandbox-daemon',
    env = {},
    args = [],
    dataDir: givenDataDir,
    token = randomBytes(32).toString('hex'),
    host = '127.0.0.1',
    startTimeoutMs = 20_000,
    onLog,
    ...clientOptions
  } = options;
  const dataDir = givenDataDir ?? (await mkdtemp(join(tmpdir(), 'sandbox-daemon-')));
  const ownsDataDir = givenDataDir === undefined;

  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...env })) {
    if (value !== undefined) childEnv[key] = value;
  }
  // The token travels in the environment only; a token file or endpoint inherited from
  // this process must not compete with it.
  delete childEnv.SANDBOX_DAEMON_TOKEN_FILE;
  childEnv.SANDBOX_DAEMON_TOKEN = token;

  const child = spawn(binary, ['--host', host, '--port', '0', '--data-dir', dataDir, ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.set(child, ownsDataDir ? dataDir : undefined);
  installExitHook();

  const logs: string[] = [];
  let announce: ((url: string) => void) | undefined;
  const listening = new Promise<string>((resolve) => {
    announce = resolve;
  });
  for (const [name, stream] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    // Always drained, so a chatty daemon never blocks on a full pipe.
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      logs.push(line);
      if (logs.length > KEPT_LINES) logs.shift();
      const match = LISTENING.exec(line);
      if (match?.[1]) announce?.(match[1]);
      onLog?.(line, name);
    });
  }
  const exited = new Promise<void>((resolve) => {
    // It stays in `running` until close(), so its temporary dir is removed at exit even
    // if it died on its own.
    child.once('close', () => resolve());
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => {
      reject(new Error(`could not start \`${binary}\` (set SANDBOX_DAEMON_BIN or pass \`binary\`): ${error.message}`));
    });
    void exited.then(() => {
      reject(
        new Error(
          `\`${binary}\` exited before it was ready (code ${child.exitCode ?? 'none'}, signal ${child.signalCode ?? 'none'}):\n${logs.slice(-20).join('\n')}`,
        ),
      );
    });
  });
  failed.catch(() => undefined);

  const local: LocalProcess = { child, token, dataDir, ownsDataDir, logs, exited };
  let daemon: LocalSandboxDaemon | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`\`${binary}\` did not answer /health within ${startTimeoutMs} ms:\n${logs.slice(-20).join('\n')}`)),
      startTimeoutMs,
    );
  });
  try {
    const baseUrl = await Promise.race([listening, failed, timeout]);
    daemon = new LocalSandboxDaemon({ ...clientOptions, baseUrl, token }, local);
    await Promise.race([waitForHealth(daemon), failed, timeout]);
    return daemon;
  } catch (error) {
    const cleanup = daemon ?? new LocalSandboxDaemon({ baseUrl: 'http://127.0.0.1/', token }, local);
    await cleanup.close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `/health` answers 200 (retrying while the connection is refused). */
async function waitForHealth(daemon: LocalSandboxDaemon): Promise<void> {
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    try {
      await daemon.health();
      return;
    } catch (error) {
      if (!daemon.running) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
