// Shared by the tests: the daemon under test, paths, small collectors.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ProblemError, SandboxDaemon } from 'sandbox-daemon';
import { startLocal, type LocalSandboxDaemon, type StartOptions } from 'sandbox-daemon/local';

/** The package root (sdks/typescript). Tests run from .test-build/ (or test/ when type-checked). */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The repository's OpenAPI document. */
export function readSpec(): {
  paths: Record<string, Record<string, { operationId?: string }>>;
  info: { version: string };
} {
  return JSON.parse(readFileSync(join(packageRoot, '..', '..', 'spec', 'openapi.json'), 'utf8'));
}

/** The daemon binary under test: `SANDBOX_DAEMON_BIN`, required. */
export function daemonBinary(): string {
  const bin = process.env.SANDBOX_DAEMON_BIN;
  if (!bin) throw new Error('SANDBOX_DAEMON_BIN must name the sandbox-daemon binary under test');
  return bin;
}

/**
 * The environment every test daemon gets: installs can never download anything (the mirror
 * and the npm registry are port 1 of loopback, where nothing listens, so an install fails at
 * once), sessions never install lazily, and no `SANDBOX_DAEMON_<AGENT>_PATH` of the caller's
 * environment leaks in (an `undefined` value removes an inherited variable).
 */
export function offlineEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const key of Object.keys(process.env)) {
    if (/^SANDBOX_DAEMON_[A-Z0-9]+_PATH$/.test(key)) env[key] = undefined;
  }
  return {
    ...env,
    SANDBOX_DAEMON_INSTALL_MIRROR: 'http://127.0.0.1:1',
    SANDBOX_DAEMON_NPM_REGISTRY: 'http://127.0.0.1:1/',
    SANDBOX_DAEMON_NO_AUTO_INSTALL: 'true',
  };
}

/** Starts a private daemon of the binary under test (through the SDK's local mode), offline. */
export function startDaemon(options: StartOptions = {}): Promise<LocalSandboxDaemon> {
  return startLocal({ binary: daemonBinary(), ...options, env: { ...offlineEnv(), ...options.env } });
}

/** A daemon started with `--no-token`: its address, and how to stop it. */
export interface NoTokenDaemon {
  /** Its base URL. */
  readonly baseUrl: string;
  /** Stops it (SIGTERM) and removes its data dir. */
  close(): Promise<void>;
}

/**
 * Starts a daemon of the binary under test with `--no-token` (local mode always sets a
 * token), offline, on a free port; resolves once `/health` answers.
 */
export async function startNoTokenDaemon(): Promise<NoTokenDaemon> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-sdk-notoken-'));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...offlineEnv() })) {
    if (value !== undefined && key !== 'SANDBOX_DAEMON_TOKEN' && key !== 'SANDBOX_DAEMON_TOKEN_FILE') env[key] = value;
  }
  const child = spawn(daemonBinary(), ['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--no-token'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const lines: string[] = [];
    const baseUrl = await new Promise<string>((resolve, reject) => {
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (line) => {
          lines.push(line);
          const match = /listening on (https?:\/\/\S+)/.exec(line);
          if (match?.[1]) resolve(match[1]);
        });
      }
      child.once('exit', (code) => reject(new Error(`the daemon exited (${code}): ${lines.join('\n')}`)));
    });
    const client = new SandboxDaemon({ baseUrl });
    for (let delay = 10; ; delay *= 2) {
      try {
        await client.health();
        break;
      } catch (error) {
        if (delay > 2000) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    return { baseUrl, close };
  } catch (error) {
    await close();
    throw error;
  }
}

let counter = 0;
/** A session id unique within this test process. */
export function uniqueId(prefix = 's'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** Every value of an async iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
}

/** `[from, from+1, ..., to]`. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/** Asserts a rejection with a `ProblemError` of `status` and `kind`. */
export function isProblem(status: number, kind: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof ProblemError, `a ProblemError, not ${String(error)}`);
    assert.equal(error.status, status, error.message);
    assert.equal(error.kind, kind, error.message);
    return true;
  };
}

/** What a recording client saw of one exchange. */
export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly search: URLSearchParams;
  readonly requestHeaders: Headers;
  readonly status: number;
}

/** A `fetch` that records every exchange it makes in `exchanges`. */
export function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    exchanges.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      search: url.searchParams,
      requestHeaders: new Headers(init?.headers),
      status: response.status,
    });
    return response;
  };
}
