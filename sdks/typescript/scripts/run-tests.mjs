#!/usr/bin/env node
// Runs the tests with node's test runner against the built package (dist/) and the real
// daemon binary named by SANDBOX_DAEMON_BIN. The tests are TypeScript (type-checked by
// `npm run typecheck`); esbuild strips their types into .test-build/ first.
//
//   node scripts/run-tests.mjs [name-filter...]

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.SANDBOX_DAEMON_BIN;
if (!bin) {
  console.error('SANDBOX_DAEMON_BIN is not set: point it at a sandbox-daemon binary (e.g. target/debug/sandbox-daemon)');
  process.exit(2);
}
try {
  accessSync(bin, constants.X_OK);
} catch {
  console.error(`SANDBOX_DAEMON_BIN=${bin} is not an executable file`);
  process.exit(2);
}
if (!existsSync(join(root, 'dist', 'index.js'))) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(2);
}

const out = join(root, '.test-build');
rmSync(out, { recursive: true, force: true });
const sources = readdirSync(join(root, 'test'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join(root, 'test', f));
await build({
  entryPoints: sources,
  outdir: out,
  outbase: join(root, 'test'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  bundle: false,
  logLevel: 'warning',
});

const filters = process.argv.slice(2);
const files = readdirSync(out)
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => filters.length === 0 || filters.some((name) => f.includes(name)))
  .sort()
  .map((f) => join(out, f));
if (files.length === 0) {
  console.error('no test file matched');
  process.exit(2);
}
// Every daemon a test starts inherits this: installs can never download anything (mirror and
// npm registry on port 1 of loopback: nothing listens, an install fails at once), no lazy
// install, and no SANDBOX_DAEMON_<AGENT>_PATH from the caller (test/helpers.ts does the same
// for the daemons it starts).
const env = { ...process.env };
for (const key of Object.keys(env)) {
  if (/^SANDBOX_DAEMON_[A-Z0-9]+_PATH$/.test(key)) delete env[key];
}
Object.assign(env, {
  SANDBOX_DAEMON_INSTALL_MIRROR: 'http://127.0.0.1:1',
  SANDBOX_DAEMON_NPM_REGISTRY: 'http://127.0.0.1:1/',
  SANDBOX_DAEMON_NO_AUTO_INSTALL: 'true',
});
const result = spawnSync(process.execPath, ['--test', '--test-timeout=120000', ...files], { stdio: 'inherit', cwd: root, env });
process.exit(result.status ?? 1);
