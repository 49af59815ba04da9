#!/usr/bin/env node
// Checks the built inline entry (dist/inline.js) and reports its size.
//
// Bundles it with esbuild for a neutral platform (no Node, no browser assumptions) with
// every package import left external, then fails when the bundle imports anything (a
// package or a Node builtin) or names a Node-only global. Prints the minified and
// minified+gzip sizes; `--json` prints them as JSON. The main entry (with zod) is
// measured too, for comparison.
//
// A Node-only global is found as esbuild resolves names: a second bundle replaces each
// reference to one (`process`, `globalThis.process`, ...) that no local name shadows with a
// marker, so a message that says "process" is not taken for a use of it.

import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const json = process.argv.includes('--json');

const NODE_GLOBALS = ['process', 'Buffer', 'require', '__dirname', '__filename', 'setImmediate', 'global'];
const marker = (name) => `__node_global_${name}__`;
/** Each Node global, bare and as a member of `globalThis`, replaced by its marker. */
const markNodeGlobals = Object.fromEntries(
  NODE_GLOBALS.flatMap((name) => [name, `globalThis.${name}`].map((ref) => [ref, marker(name)])),
);

/** Bundles `entry`; `external` leaves packages out; `define` replaces global names. */
async function bundle(entry, { external, define }) {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    ...(define ? { define } : {}),
    ...(external ? { packages: 'external', external: ['node:*'] } : { mainFields: ['module', 'main'] }),
  });
  const code = result.outputFiles[0].contents;
  const output = Object.values(result.metafile.outputs)[0];
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    imports: output.imports.map((i) => i.path),
    inputs: Object.keys(result.metafile.inputs).map((p) => relative(root, resolve(root, p))),
    text: Buffer.from(code).toString('utf8'),
  };
}

const inline = await bundle('dist/inline.js', { external: true });
const problems = [];
if (inline.imports.length > 0) problems.push(`imports ${inline.imports.join(', ')}`);
const outside = inline.inputs.filter((p) => !p.startsWith('dist/'));
if (outside.length > 0) problems.push(`includes files outside dist/: ${outside.join(', ')}`);
const marked = (await bundle('dist/inline.js', { external: true, define: markNodeGlobals })).text;
const nodeGlobals = NODE_GLOBALS.filter(
  (name) => marked.includes(marker(name)) || new RegExp(`\\[\\s*["'\`]${name}["'\`]\\s*\\]`).test(marked),
);
if (nodeGlobals.length > 0) problems.push(`names Node globals: ${nodeGlobals.join(', ')}`);

const main = await bundle('dist/index.js', { external: false });
const report = {
  inline: { minified: inline.minified, gzip: inline.gzip, modules: inline.inputs.length, imports: inline.imports },
  main: { minified: main.minified, gzip: main.gzip },
  zodVersion: JSON.parse(readFileSync(join(root, 'node_modules', 'zod', 'package.json'), 'utf8')).version,
  problems,
};

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
if (json) {
  console.log(JSON.stringify(report));
} else {
  console.log(
    `sandbox-daemon/inline: ${kb(inline.minified)} minified, ${kb(inline.gzip)} minified+gzip ` +
      `(${inline.inputs.length} modules, ${inline.imports.length} imports)`,
  );
  console.log(`sandbox-daemon (with zod ${report.zodVersion} bundled): ${kb(main.minified)} minified, ${kb(main.gzip)} minified+gzip`);
}
if (problems.length > 0) {
  console.error(`the inline entry must stand alone, but it ${problems.join('; ')}`);
  process.exit(1);
}
